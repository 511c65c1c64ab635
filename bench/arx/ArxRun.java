/*
 * ARX's side of `npm run bench:arx`: one long-lived JVM that reads commands from stdin and
 * answers each on one line of stdout, so the JIT stays warm and the bench interleaves ARX's
 * runs with ppdp's. Commands are tab-separated `key=value` fields after a verb:
 *
 *   config  data=<csv>  delim=<c>  qi=<column>=<hierarchy.csv>…  sa=<column>  sah=<hierarchy.csv>
 *           ident=<column>…  model=k:5 | distinct-l:3 | entropy-l:3 | recursive-cl:<c>:<l> |
 *           equal-t:0.2 | hierarchical-t:0.2 | delta:<δ for log₂> …  supp=0.02  metric=loss | discernibility
 *     → "ready"  (reads the data and hierarchies, not timed; every other column is insensitive)
 *   run → "ok <ms> <column>=<level>,… <nodes checked> <lattice size>"  (one timed anonymize())
 *   quit
 *
 * Errors answer "error <message>" and the JVM keeps serving.
 */
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.deidentifier.arx.ARXAnonymizer;
import org.deidentifier.arx.ARXConfiguration;
import org.deidentifier.arx.ARXLattice;
import org.deidentifier.arx.ARXResult;
import org.deidentifier.arx.AttributeType.Hierarchy;
import org.deidentifier.arx.Data;
import org.deidentifier.arx.criteria.DDisclosurePrivacy;
import org.deidentifier.arx.criteria.DistinctLDiversity;
import org.deidentifier.arx.criteria.EntropyLDiversity;
import org.deidentifier.arx.criteria.EqualDistanceTCloseness;
import org.deidentifier.arx.criteria.HierarchicalDistanceTCloseness;
import org.deidentifier.arx.criteria.KAnonymity;
import org.deidentifier.arx.criteria.RecursiveCLDiversity;
import org.deidentifier.arx.metric.Metric;
import org.deidentifier.arx.metric.Metric.AggregateFunction;

public class ArxRun {
    private static final Map<String, Data> DATA = new HashMap<>();
    private static final Map<String, Hierarchy> HIERARCHIES = new HashMap<>();
    private static Data data;
    private static ARXConfiguration config;

    public static void main(String[] args) throws Exception {
        ArxHarness.serve(fields -> switch (fields[0]) {
            case "config" -> configure(fields);
            case "run" -> run();
            default -> "error unknown command " + fields[0];
        });
    }

    private static Hierarchy hierarchy(String file) throws IOException {
        Hierarchy h = HIERARCHIES.get(file);
        if (h == null) HIERARCHIES.put(file, h = ArxHarness.readHierarchy(file));
        return h;
    }

    private static String configure(String[] fields) throws Exception {
        String file = null, sa = null, sah = null, metric = "loss";
        char delim = ';';
        double supp = 0;
        Map<String, String> qis = new LinkedHashMap<>();
        List<String> ident = new ArrayList<>();
        List<String> models = new ArrayList<>();
        for (int i = 1; i < fields.length; i++) {
            String[] kv = ArxHarness.keyValue(fields[i]);
            String key = kv[0], value = kv[1];
            switch (key) {
                case "data": file = value; break;
                case "delim": delim = value.charAt(0); break;
                case "qi": ArxHarness.putQi(qis, value); break;
                case "sa": sa = value; break;
                case "sah": sah = value; break;
                case "ident": ident.add(value); break;
                case "model": models.add(value); break;
                case "supp": supp = Double.parseDouble(value); break;
                case "metric": metric = value; break;
                default: throw new IllegalArgumentException("unknown field " + key);
            }
        }
        if (data != null) data.getHandle().release();
        String key = file + "\u0000" + delim;
        data = DATA.get(key);
        if (data == null) DATA.put(key, data = Data.create(file, StandardCharsets.UTF_8, delim));
        // ARX refuses a sensitive attribute no model protects: without one it is insensitive.
        ArxHarness.define(data, qis, ArxRun::hierarchy, ident, models.size() > 1 ? sa : null);
        config = ARXConfiguration.create();
        for (String model : models) {
            String[] m = model.split(":");
            switch (m[0]) {
                case "k": config.addPrivacyModel(new KAnonymity(Integer.parseInt(m[1]))); break;
                case "distinct-l": config.addPrivacyModel(new DistinctLDiversity(sa, Integer.parseInt(m[1]))); break;
                case "entropy-l": config.addPrivacyModel(new EntropyLDiversity(sa, Double.parseDouble(m[1]))); break;
                case "recursive-cl": config.addPrivacyModel(new RecursiveCLDiversity(sa, Double.parseDouble(m[1]), Integer.parseInt(m[2]))); break;
                case "equal-t": config.addPrivacyModel(new EqualDistanceTCloseness(sa, Double.parseDouble(m[1]))); break;
                case "hierarchical-t": config.addPrivacyModel(new HierarchicalDistanceTCloseness(sa, Double.parseDouble(m[1]), hierarchy(sah))); break;
                case "delta": config.addPrivacyModel(new DDisclosurePrivacy(sa, Double.parseDouble(m[1]))); break;
                default: throw new IllegalArgumentException("unknown model " + model);
            }
        }
        config.setSuppressionLimit(supp);
        // ARX's Loss with the arithmetic mean (its default aggregate is the geometric mean).
        config.setQualityModel(metric.equals("discernibility")
            ? Metric.createDiscernabilityMetric(false)
            : Metric.createLossMetric(0.5, AggregateFunction.ARITHMETIC_MEAN));
        config.setAlgorithm(ARXConfiguration.AnonymizationAlgorithm.OPTIMAL);
        config.setHeuristicSearchThreshold(Integer.MAX_VALUE); // optimal Flash, whatever the lattice's size
        return "ready";
    }

    private static String run() throws Exception {
        data.getHandle().release();
        long t0 = System.nanoTime();
        ARXResult result = new ARXAnonymizer().anonymize(data, config);
        double ms = (System.nanoTime() - t0) / 1e6;
        ARXLattice.ARXNode best = result.getGlobalOptimum();
        String node = best == null ? "none" : ArxHarness.nodeText(best);
        int checked = 0;
        for (ARXLattice.ARXNode[] level : result.getLattice().getLevels())
            for (ARXLattice.ARXNode n : level) if (n.isChecked()) checked++;
        return String.format("ok\t%.3f\t%s\t%d\t%s", ms, node, checked, result.getLattice().getVirtualSize());
    }
}
