/*
 * ARX's side of `npm run bench:dp`: (ε, δ)-differential privacy by sampling and generalization
 * (ARX 3.9.2's EDDifferentialPrivacy), in one long-lived JVM that reads commands from stdin and
 * answers each on one line of stdout, so the JIT stays warm and the bench interleaves ARX's runs
 * with ppdp's. Commands are tab-separated `key=value` fields after a verb:
 *
 *   data  file=<csv>  delim=<c>  qi=<column>=<hierarchy.csv>…
 *     → "ready"  (reads the data and hierarchies, not timed; every other column is insensitive)
 *   run  eps=<ε>  delta=<δ>  ( levels=<column>=<level>,…  |  search=<ε_search>  steps=<n> )
 *     → "ok <ms> <column>=<level>,… <loss> <rows released> <rows sampled> <β> <k> <cpu ms>
 *         <output ms> <output cpu ms> <process cpu ms> <output process cpu ms>"
 *       (one timed anonymize(): the derivation of β and k, the sample, the search if any, and
 *       the suppression, on the data ARX already holds encoded, in wall-clock, in the calling
 *       thread's CPU time and in the whole JVM's (every thread: the collector's and the JIT
 *       compilers' too; "NaN" where the JVM does not give its internal threads' times); then,
 *       timed apart, getOutput(): the released table built in memory (ARX builds it lazily,
 *       after anonymize()); then, untimed, the Loss of the output over every input row)
 *   quit
 *
 * The Loss is ARX's (gs-factor 0.5, arithmetic mean over the quasi-identifiers) computed from
 * the output: a released cell costs the share of the hierarchy's rows under its label at the
 * chosen level, a cell of a row not released (not sampled, or suppressed) costs 1; per
 * quasi-identifier normalized between n / (hierarchy rows) and n. bench/dp.ts computes ppdp's
 * the same way from its released rows. Errors answer "error <message>".
 */
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import sun.management.HotspotThreadMBean;
import sun.management.ManagementFactoryHelper;

import org.deidentifier.arx.ARXAnonymizer;
import org.deidentifier.arx.ARXConfiguration;
import org.deidentifier.arx.ARXLattice;
import org.deidentifier.arx.ARXResult;
import org.deidentifier.arx.AttributeType;
import org.deidentifier.arx.AttributeType.Hierarchy;
import org.deidentifier.arx.Data;
import org.deidentifier.arx.DataGeneralizationScheme;
import org.deidentifier.arx.DataHandle;
import org.deidentifier.arx.criteria.EDDifferentialPrivacy;
import org.deidentifier.arx.metric.Metric;
import org.deidentifier.arx.metric.Metric.AggregateFunction;

public class DpBench {
    private static Data data;
    private static final Map<String, String[][]> HIERARCHY_ROWS = new LinkedHashMap<>();
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    /** HotSpot's view of its own threads (the collector's, the compilers'), or null on another JVM. */
    private static final HotspotThreadMBean INTERNAL_THREADS = internalThreads();

    private static HotspotThreadMBean internalThreads() {
        try {
            HotspotThreadMBean bean = ManagementFactoryHelper.getHotspotThreadMBean();
            bean.getInternalThreadCpuTimes();
            return bean;
        } catch (Throwable e) {
            return null;
        }
    }

    /**
     * The JVM's CPU time over all its threads, ns, or -1. Not OperatingSystemMXBean's
     * getProcessCpuTime(): on Linux it counts clock ticks (10 ms steps, as coarse as a whole
     * release); each thread's own clock is read to the nanosecond instead. A thread that ends
     * between two readings drops out of the second (the harness starts none while it runs).
     */
    private static long processCpuNanos() {
        if (INTERNAL_THREADS == null) return -1;
        long sum = 0;
        for (long id : THREADS.getAllThreadIds()) sum += Math.max(0, THREADS.getThreadCpuTime(id));
        for (long ns : INTERNAL_THREADS.getInternalThreadCpuTimes().values()) sum += Math.max(0, ns);
        return sum;
    }

    private static double processCpuMs(long from, long to) {
        return from < 0 || to < 0 ? Double.NaN : (to - from) / 1e6;
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] fields = line.split("\t");
            String answer;
            try {
                switch (fields[0]) {
                    case "data": answer = load(fields); break;
                    case "run": answer = run(fields); break;
                    case "quit": return;
                    default: answer = "error unknown command " + fields[0];
                }
            } catch (Exception e) {
                answer = "error " + e.getClass().getSimpleName() + ": " + String.valueOf(e.getMessage()).replace('\n', ' ');
            }
            System.out.println(answer);
            System.out.flush();
        }
    }

    private static Map<String, String> fieldsOf(String[] fields) {
        Map<String, String> out = new LinkedHashMap<>();
        for (int i = 1; i < fields.length; i++) {
            int eq = fields[i].indexOf('=');
            String key = fields[i].substring(0, eq), value = fields[i].substring(eq + 1);
            out.put(key.equals("qi") ? "qi:" + value.substring(0, value.indexOf('=')) : key,
                key.equals("qi") ? value.substring(value.indexOf('=') + 1) : value);
        }
        return out;
    }

    private static String load(String[] fields) throws Exception {
        Map<String, String> f = fieldsOf(fields);
        if (data != null) data.getHandle().release();
        data = Data.create(f.get("file"), StandardCharsets.UTF_8, f.get("delim").charAt(0));
        HIERARCHY_ROWS.clear();
        DataHandle handle = data.getHandle();
        for (int c = 0; c < handle.getNumColumns(); c++) {
            String column = handle.getAttributeName(c);
            String file = f.get("qi:" + column);
            if (file != null) {
                Hierarchy h = Hierarchy.create(file, StandardCharsets.UTF_8, ';');
                data.getDefinition().setAttributeType(column, h);
                HIERARCHY_ROWS.put(column, h.getHierarchy());
            } else data.getDefinition().setAttributeType(column, AttributeType.INSENSITIVE_ATTRIBUTE);
        }
        return "ready";
    }

    private static String run(String[] fields) throws Exception {
        Map<String, String> f = fieldsOf(fields);
        double epsilon = Double.parseDouble(f.get("eps"));
        double delta = Double.parseDouble(f.get("delta"));
        ARXConfiguration config = ARXConfiguration.create();
        EDDifferentialPrivacy criterion;
        if (f.containsKey("levels")) {
            DataGeneralizationScheme scheme = DataGeneralizationScheme.create(data);
            for (String pair : f.get("levels").split(",")) {
                int eq = pair.indexOf('=');
                scheme.generalize(pair.substring(0, eq), Integer.parseInt(pair.substring(eq + 1)));
            }
            criterion = new EDDifferentialPrivacy(epsilon, delta, scheme);
        } else {
            criterion = new EDDifferentialPrivacy(epsilon, delta);
            config.setDPSearchBudget(Double.parseDouble(f.get("search")));
            config.setHeuristicSearchStepLimit(Integer.parseInt(f.get("steps")),
                ARXConfiguration.SearchStepSemantics.EXPANSIONS);
            config.setHeuristicSearchTimeLimit(Integer.MAX_VALUE);
        }
        config.addPrivacyModel(criterion);
        config.setSuppressionLimit(1d);
        config.setQualityModel(Metric.createLossMetric(0.5, AggregateFunction.ARITHMETIC_MEAN));
        data.getHandle().release();
        // The process's reading outside the thread's and the clock's, so that its own cost
        // (tens of µs) falls outside those two.
        long p0 = processCpuNanos();
        long c0 = THREADS.getCurrentThreadCpuTime();
        long t0 = System.nanoTime();
        ARXResult result = new ARXAnonymizer().anonymize(data, config);
        double ms = (System.nanoTime() - t0) / 1e6;
        double cpuMs = (THREADS.getCurrentThreadCpuTime() - c0) / 1e6;
        long p1 = processCpuNanos();
        ARXLattice.ARXNode best = result.getGlobalOptimum();
        long outP0 = processCpuNanos();
        long outC0 = THREADS.getCurrentThreadCpuTime();
        long outT0 = System.nanoTime();
        DataHandle out = result.getOutput(best, false);
        double outMs = (System.nanoTime() - outT0) / 1e6;
        double outCpuMs = (THREADS.getCurrentThreadCpuTime() - outC0) / 1e6;
        long outP1 = processCpuNanos();
        String[] names = best.getQuasiIdentifyingAttributes();
        int[] levels = best.getTransformation();
        StringBuilder node = new StringBuilder();
        for (int i = 0; i < names.length; i++) node.append(i > 0 ? "," : "").append(names[i]).append('=').append(levels[i]);
        int n = out.getNumRows();
        int released = 0;
        for (int r = 0; r < n; r++) if (!out.isOutlier(r)) released++;
        double loss = 0;
        for (int i = 0; i < names.length; i++) {
            String[][] rows = HIERARCHY_ROWS.get(names[i]);
            Map<String, Integer> under = new HashMap<>();
            for (String[] row : rows) under.merge(row[levels[i]], 1, Integer::sum);
            int column = out.getColumnIndexOf(names[i]);
            double sum = 0;
            for (int r = 0; r < n; r++) {
                if (out.isOutlier(r)) sum += 1;
                else {
                    Integer count = under.get(out.getValue(r, column));
                    if (count == null) throw new IllegalStateException("a released label not in the hierarchy of " + names[i]);
                    sum += (double) count / rows.length;
                }
            }
            double least = (double) n / rows.length;
            loss += (n > least ? Math.max(0, (sum - least) / (n - least)) : 0) / names.length;
        }
        // anonymize() works on a copy of the configuration: its criterion holds β, k and the sample.
        EDDifferentialPrivacy used = result.getConfiguration().getPrivacyModel(EDDifferentialPrivacy.class);
        int sampled = used.getDataSubset().getArray().length;
        return String.format("ok\t%.3f\t%s\t%.17g\t%d\t%d\t%.17g\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f", ms, node, loss,
            released, sampled, used.getBeta(), used.getK(), cpuMs, outMs, outCpuMs, processCpuMs(p0, p1),
            processCpuMs(outP0, outP1));
    }
}
