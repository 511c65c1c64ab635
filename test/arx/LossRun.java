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
 */
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.deidentifier.arx.ARXAnonymizer;
import org.deidentifier.arx.ARXConfiguration;
import org.deidentifier.arx.ARXLattice;
import org.deidentifier.arx.ARXResult;
import org.deidentifier.arx.AttributeType;
import org.deidentifier.arx.AttributeType.Hierarchy;
import org.deidentifier.arx.Data;
import org.deidentifier.arx.DataHandle;
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
            int eq = arg.indexOf('=');
            String key = arg.substring(0, eq), value = arg.substring(eq + 1);
            switch (key) {
                case "data": file = value; break;
                case "delim": delim = value.charAt(0); break;
                case "qi": { int e = value.indexOf('='); qis.put(value.substring(0, e), value.substring(e + 1)); break; }
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
        DataHandle handle = data.getHandle();
        boolean sensitive = models.stream().anyMatch(m -> !m.startsWith("k:"));
        for (int c = 0; c < handle.getNumColumns(); c++) {
            String column = handle.getAttributeName(c);
            if (qis.containsKey(column))
                data.getDefinition().setAttributeType(column, Hierarchy.create(qis.get(column), StandardCharsets.UTF_8, ';'));
            else if (column.equals(sa) && sensitive) data.getDefinition().setAttributeType(column, AttributeType.SENSITIVE_ATTRIBUTE);
            else data.getDefinition().setAttributeType(column, AttributeType.INSENSITIVE_ATTRIBUTE);
        }
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
        StringBuilder out = new StringBuilder();
        String[] names = node.getQuasiIdentifyingAttributes();
        int[] levels = node.getTransformation();
        for (int i = 0; i < names.length; i++) out.append(i > 0 ? "," : "").append(names[i]).append('=').append(levels[i]);
        InformationLoss<?> loss = node.getHighestScore();
        // The aggregate over the QIs, as ARX compares nodes by it (protected: read reflectively).
        Method aggregate = findMethod(loss.getClass(), "getAggregate");
        aggregate.setAccessible(true);
        out.append('\t').append(String.valueOf(aggregate.invoke(loss)));
        out.append('\t').append(Arrays.toString((double[]) loss.getValue()));
        return out.toString();
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
