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
import org.deidentifier.arx.Data;
import org.deidentifier.arx.criteria.KAnonymity;
import org.deidentifier.arx.metric.Metric;
import org.deidentifier.arx.metric.Metric.AggregateFunction;

public class BestEffortRun {
    private static Data data;
    private static int k = 5;
    private static double supp = 0.02;

    public static void main(String[] args) throws Exception {
        ArxHarness.serve(fields -> switch (fields[0]) {
            case "config" -> configure(fields);
            case "run" -> run(fields);
            default -> "error unknown command " + fields[0];
        });
    }

    private static String configure(String[] fields) throws Exception {
        String file = null;
        char delim = ';';
        Map<String, String> qis = new LinkedHashMap<>();
        List<String> ident = new ArrayList<>();
        for (int i = 1; i < fields.length; i++) {
            String[] kv = ArxHarness.keyValue(fields[i]);
            String key = kv[0], value = kv[1];
            switch (key) {
                case "data": file = value; break;
                case "delim": delim = value.charAt(0); break;
                case "qi": ArxHarness.putQi(qis, value); break;
                case "ident": ident.add(value); break;
                case "k": k = Integer.parseInt(value); break;
                case "supp": supp = Double.parseDouble(value); break;
                default: throw new IllegalArgumentException("unknown field " + key);
            }
        }
        if (data != null) data.getHandle().release();
        data = Data.create(file, StandardCharsets.UTF_8, delim);
        ArxHarness.define(data, qis, ArxHarness::readHierarchy, ident, null);
        return "ready";
    }

    private static String run(String[] fields) throws Exception {
        String algorithm = "genetic";
        int ms = 10_000;
        for (int i = 1; i < fields.length; i++) {
            String[] kv = ArxHarness.keyValue(fields[i]);
            String key = kv[0], value = kv[1];
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
        return String.format("ok\t%.3f\t%s\t%s", took, ArxHarness.nodeText(best), ArxHarness.aggregate(best.getHighestScore()));
    }
}
