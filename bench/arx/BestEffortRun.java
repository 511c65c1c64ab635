/*
 * ARX's side of `npm run bench:wide`: ARX's three best-effort searches (genetic, bottom-up
 * "Lightning", top-down) on a wide table, under a time limit. One long-lived JVM reads commands
 * from stdin and answers each on one line, so that its runs interleave with ppdp's. Commands are
 * tab-separated `key=value` fields after a verb:
 *
 *   config  data=<csv>  delim=<c>  qi=<column>=<hierarchy.csv>…  ident=<column>…  k=5  supp=0.02
 *     → "ready"  (reads the data and hierarchies, not timed; every other column is insensitive;
 *        Loss with gs-factor 0.5 and the arithmetic mean, as ppdp's `loss` with those settings)
 *   run  algorithm=genetic | bottom-up | top-down  ms=<time limit>
 *     → "ok <ms> <column>=<level>,… <Loss>"  (one timed anonymize(); "none" when nothing found)
 *   quit
 *
 * Errors answer "error <message>" and the JVM keeps serving.
 */
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.deidentifier.arx.ARXAnonymizer;
import org.deidentifier.arx.ARXConfiguration;
import org.deidentifier.arx.ARXConfiguration.AnonymizationAlgorithm;
import org.deidentifier.arx.ARXLattice;
import org.deidentifier.arx.ARXResult;
import org.deidentifier.arx.AttributeType;
import org.deidentifier.arx.AttributeType.Hierarchy;
import org.deidentifier.arx.Data;
import org.deidentifier.arx.DataHandle;
import org.deidentifier.arx.criteria.KAnonymity;
import org.deidentifier.arx.metric.InformationLoss;
import org.deidentifier.arx.metric.Metric;
import org.deidentifier.arx.metric.Metric.AggregateFunction;

public class BestEffortRun {
    private static Data data;
    private static int k = 5;
    private static double supp = 0.02;

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] fields = line.split("\t");
            String answer;
            try {
                switch (fields[0]) {
                    case "config": answer = configure(fields); break;
                    case "run": answer = run(fields); break;
                    case "quit": return;
                    default: answer = "error unknown command " + fields[0];
                }
            } catch (Throwable e) {
                answer = "error " + e.getClass().getSimpleName() + ": " + String.valueOf(e.getMessage()).replace('\n', ' ');
            }
            System.out.println(answer);
            System.out.flush();
        }
    }

    private static String configure(String[] fields) throws Exception {
        String file = null;
        char delim = ';';
        Map<String, String> qis = new LinkedHashMap<>();
        List<String> ident = new ArrayList<>();
        for (int i = 1; i < fields.length; i++) {
            int eq = fields[i].indexOf('=');
            String key = fields[i].substring(0, eq), value = fields[i].substring(eq + 1);
            switch (key) {
                case "data": file = value; break;
                case "delim": delim = value.charAt(0); break;
                case "qi": { int e = value.indexOf('='); qis.put(value.substring(0, e), value.substring(e + 1)); break; }
                case "ident": ident.add(value); break;
                case "k": k = Integer.parseInt(value); break;
                case "supp": supp = Double.parseDouble(value); break;
                default: throw new IllegalArgumentException("unknown field " + key);
            }
        }
        if (data != null) data.getHandle().release();
        data = Data.create(file, StandardCharsets.UTF_8, delim);
        DataHandle handle = data.getHandle();
        for (int c = 0; c < handle.getNumColumns(); c++) {
            String column = handle.getAttributeName(c);
            if (qis.containsKey(column))
                data.getDefinition().setAttributeType(column, Hierarchy.create(qis.get(column), StandardCharsets.UTF_8, ';'));
            else if (ident.contains(column)) data.getDefinition().setAttributeType(column, AttributeType.IDENTIFYING_ATTRIBUTE);
            else data.getDefinition().setAttributeType(column, AttributeType.INSENSITIVE_ATTRIBUTE);
        }
        return "ready";
    }

    private static String run(String[] fields) throws Exception {
        String algorithm = "genetic";
        int ms = 10_000;
        for (int i = 1; i < fields.length; i++) {
            int eq = fields[i].indexOf('=');
            String key = fields[i].substring(0, eq), value = fields[i].substring(eq + 1);
            switch (key) {
                case "algorithm": algorithm = value; break;
                case "ms": ms = Integer.parseInt(value); break;
                default: throw new IllegalArgumentException("unknown field " + key);
            }
        }
        ARXConfiguration config = ARXConfiguration.create();
        config.addPrivacyModel(new KAnonymity(k));
        config.setSuppressionLimit(supp);
        config.setQualityModel(Metric.createLossMetric(0.5, AggregateFunction.ARITHMETIC_MEAN));
        switch (algorithm) {
            case "genetic":
                config.setAlgorithm(AnonymizationAlgorithm.BEST_EFFORT_GENETIC);
                config.setGeneticAlgorithmDeterministic(true);
                break;
            case "bottom-up": config.setAlgorithm(AnonymizationAlgorithm.BEST_EFFORT_BOTTOM_UP); break;
            case "top-down": config.setAlgorithm(AnonymizationAlgorithm.BEST_EFFORT_TOP_DOWN); break;
            default: throw new IllegalArgumentException("unknown algorithm " + algorithm);
        }
        config.setHeuristicSearchTimeLimit(ms);
        data.getHandle().release();
        long t0 = System.nanoTime();
        ARXResult result = new ARXAnonymizer().anonymize(data, config);
        double took = (System.nanoTime() - t0) / 1e6;
        ARXLattice.ARXNode best = result.getGlobalOptimum();
        if (best == null) return String.format("ok\t%.3f\tnone\tNaN", took);
        StringBuilder node = new StringBuilder();
        String[] names = best.getQuasiIdentifyingAttributes();
        int[] levels = best.getTransformation();
        for (int i = 0; i < names.length; i++) node.append(i > 0 ? "," : "").append(names[i]).append('=').append(levels[i]);
        InformationLoss<?> loss = best.getHighestScore();
        // The aggregate over the QIs, as ARX compares nodes by it (protected: read reflectively).
        Method aggregate = findMethod(loss.getClass(), "getAggregate");
        aggregate.setAccessible(true);
        return String.format("ok\t%.3f\t%s\t%s", took, node, String.valueOf(aggregate.invoke(loss)));
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
