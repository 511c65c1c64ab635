/*
 * What the ARX harnesses share (bench/arx/ArxRun.java, bench/arx/BestEffortRun.java,
 * test/arx/LossRun.java): their `key=value` fields, the columns' attribute types, a node as
 * `<column>=<level>,…`, ARX's aggregate information loss, and the long-lived JVM's command loop.
 * Compiled by javac alongside each of them (bench/arx-harness.ts, test/arx/loss.test.ts).
 */
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import org.deidentifier.arx.ARXLattice;
import org.deidentifier.arx.AttributeType;
import org.deidentifier.arx.AttributeType.Hierarchy;
import org.deidentifier.arx.Data;
import org.deidentifier.arx.DataHandle;
import org.deidentifier.arx.metric.InformationLoss;

final class ArxHarness {
    private ArxHarness() {}

    /** One command's answer, from its tab-separated fields (the verb first). */
    interface Command {
        String answer(String[] fields) throws Exception;
    }

    /** Reads a hierarchy file (ArxRun keeps the ones it has read). */
    interface HierarchyReader {
        Hierarchy read(String file) throws IOException;
    }

    /**
     * Serves commands from stdin, one answer line each on stdout, until "quit" or the end of
     * input. An error answers "error <message>" and the JVM keeps serving.
     */
    static void serve(Command command) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] fields = line.split("\t");
            if (fields[0].equals("quit")) return;
            String answer;
            try {
                answer = command.answer(fields);
            } catch (Throwable e) {
                answer = "error " + e.getClass().getSimpleName() + ": " + String.valueOf(e.getMessage()).replace('\n', ' ');
            }
            System.out.println(answer);
            System.out.flush();
        }
    }

    /** A `key=value` field split at its first '='. */
    static String[] keyValue(String field) {
        int eq = field.indexOf('=');
        return new String[] { field.substring(0, eq), field.substring(eq + 1) };
    }

    /** A `qi=<column>=<hierarchy.csv>` field's value into `qis`. */
    static void putQi(Map<String, String> qis, String value) {
        int e = value.indexOf('=');
        qis.put(value.substring(0, e), value.substring(e + 1));
    }

    /** An ARX hierarchy file as `ppdp hierarchy` writes it (UTF-8, ';'). */
    static Hierarchy readHierarchy(String file) throws IOException {
        return Hierarchy.create(file, StandardCharsets.UTF_8, ';');
    }

    /**
     * Each column's attribute type: a quasi-identifier with its hierarchy, identifying, the
     * sensitive attribute (none when null), every other column insensitive.
     */
    static void define(Data data, Map<String, String> qis, HierarchyReader hierarchies, List<String> ident, String sensitive)
        throws IOException {
        DataHandle handle = data.getHandle();
        for (int c = 0; c < handle.getNumColumns(); c++) {
            String column = handle.getAttributeName(c);
            if (qis.containsKey(column)) data.getDefinition().setAttributeType(column, hierarchies.read(qis.get(column)));
            else if (ident.contains(column)) data.getDefinition().setAttributeType(column, AttributeType.IDENTIFYING_ATTRIBUTE);
            else if (column.equals(sensitive)) data.getDefinition().setAttributeType(column, AttributeType.SENSITIVE_ATTRIBUTE);
            else data.getDefinition().setAttributeType(column, AttributeType.INSENSITIVE_ATTRIBUTE);
        }
    }

    /** A node as `<column>=<level>,…`. */
    static String nodeText(ARXLattice.ARXNode node) {
        StringBuilder out = new StringBuilder();
        String[] names = node.getQuasiIdentifyingAttributes();
        int[] levels = node.getTransformation();
        for (int i = 0; i < names.length; i++) out.append(i > 0 ? "," : "").append(names[i]).append('=').append(levels[i]);
        return out.toString();
    }

    /** The aggregate over the QIs, as ARX compares nodes by it (protected: read reflectively). */
    static String aggregate(InformationLoss<?> loss) throws ReflectiveOperationException {
        Method aggregate = findMethod(loss.getClass(), "getAggregate");
        aggregate.setAccessible(true);
        return String.valueOf(aggregate.invoke(loss));
    }

    private static Method findMethod(Class<?> type, String name) throws NoSuchMethodException {
        for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            try {
                return c.getDeclaredMethod(name);
            } catch (NoSuchMethodException e) {
                // look further up
            }
        }
        throw new NoSuchMethodException(name);
    }
}
