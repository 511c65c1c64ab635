/*
 * ARX's side of test/arx/loss.test.ts: one anonymization with ARX's Loss metric, printing the
 * information loss ARX reports for its optimum and for the nodes asked about. Arguments are
 * `key=value`:
 *
 *   data=<csv>  delim=<c>  qi=<column>=<hierarchy.csv>…  sa=<column>  model=k:5 | distinct-l:3 …
 *   supp=0.02  aggregate=geometric | arithmetic  gs=0.5  weight=<column>=<w>…  node=<column>=<level>,…
 *
 * Prints, tab-separated: `optimum <column>=<level>,… <aggregate> <per-QI values>` and the same
 * line per `node=` (`node …`). The aggregate is ARX's own (the information loss's getAggregate).
 * Compiled with bench/arx/ArxHarness.java.
 */
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.deidentifier.arx.ARXAnonymizer;
import org.deidentifier.arx.ARXConfiguration;
import org.deidentifier.arx.ARXLattice;
import org.deidentifier.arx.ARXResult;
import org.deidentifier.arx.Data;
import org.deidentifier.arx.criteria.DistinctLDiversity;
import org.deidentifier.arx.criteria.KAnonymity;
import org.deidentifier.arx.metric.InformationLoss;
import org.deidentifier.arx.metric.Metric;
import org.deidentifier.arx.metric.Metric.AggregateFunction;

public class LossRun {
    public static void main(String[] args) throws Exception {
        String file = null, sa = null, aggregate = "geometric";
        char delim = ';';
        double supp = 0, gs = 0.5;
        Map<String, String> qis = new LinkedHashMap<>();
        Map<String, Double> weights = new LinkedHashMap<>();
        List<String> models = new ArrayList<>();
        List<String> nodes = new ArrayList<>();
        for (String arg : args) {
            String[] kv = ArxHarness.keyValue(arg);
            String key = kv[0], value = kv[1];
            switch (key) {
                case "data": file = value; break;
                case "delim": delim = value.charAt(0); break;
                case "qi": ArxHarness.putQi(qis, value); break;
                case "sa": sa = value; break;
                case "model": models.add(value); break;
                case "supp": supp = Double.parseDouble(value); break;
                case "aggregate": aggregate = value; break;
                case "gs": gs = Double.parseDouble(value); break;
                case "weight": { int e = value.lastIndexOf('='); weights.put(value.substring(0, e), Double.parseDouble(value.substring(e + 1))); break; }
                case "node": nodes.add(value); break;
                default: throw new IllegalArgumentException("unknown argument " + key);
            }
        }
        Data data = Data.create(file, StandardCharsets.UTF_8, delim);
        boolean sensitive = models.stream().anyMatch(m -> !m.startsWith("k:"));
        ArxHarness.define(data, qis, ArxHarness::readHierarchy, Collections.emptyList(), sensitive ? sa : null);
        ARXConfiguration config = ARXConfiguration.create();
        for (String model : models) {
            String[] m = model.split(":");
            switch (m[0]) {
                case "k": config.addPrivacyModel(new KAnonymity(Integer.parseInt(m[1]))); break;
                case "distinct-l": config.addPrivacyModel(new DistinctLDiversity(sa, Integer.parseInt(m[1]))); break;
                default: throw new IllegalArgumentException("unknown model " + model);
            }
        }
        config.setSuppressionLimit(supp);
        config.setQualityModel(Metric.createLossMetric(gs,
            aggregate.equals("arithmetic") ? AggregateFunction.ARITHMETIC_MEAN : AggregateFunction.GEOMETRIC_MEAN));
        for (Map.Entry<String, Double> w : weights.entrySet()) config.setAttributeWeight(w.getKey(), w.getValue());
        config.setAlgorithm(ARXConfiguration.AnonymizationAlgorithm.OPTIMAL);
        config.setHeuristicSearchThreshold(Integer.MAX_VALUE); // optimal Flash, whatever the lattice's size

        ARXResult result = new ARXAnonymizer().anonymize(data, config);
        ARXLattice.ARXNode best = result.getGlobalOptimum();
        if (best == null) {
            System.out.println("optimum\tnone");
            return;
        }
        System.out.println("optimum\t" + describe(best));
        for (String wanted : nodes) {
            ARXLattice.ARXNode node = find(result, best.getQuasiIdentifyingAttributes(), wanted);
            // Applying the transformation makes ARX measure the node (unchecked nodes hold bounds only).
            result.getOutput(node, false).release();
            System.out.println("node\t" + describe(node));
        }
    }

    private static ARXLattice.ARXNode find(ARXResult result, String[] names, String wanted) {
        Map<String, Integer> levels = new LinkedHashMap<>();
        for (String kv : wanted.split(",")) {
            int e = kv.lastIndexOf('=');
            levels.put(kv.substring(0, e), Integer.parseInt(kv.substring(e + 1)));
        }
        int[] transformation = new int[names.length];
        for (int i = 0; i < names.length; i++) transformation[i] = levels.get(names[i]);
        ARXLattice.ARXNode node = result.getLattice().getNode(transformation); // materialized if need be
        if (node == null) throw new IllegalArgumentException("no node " + wanted);
        return node;
    }

    private static String describe(ARXLattice.ARXNode node) throws Exception {
        InformationLoss<?> loss = node.getHighestScore();
        return ArxHarness.nodeText(node) + '\t' + ArxHarness.aggregate(loss) + '\t' + Arrays.toString((double[]) loss.getValue());
    }
}
