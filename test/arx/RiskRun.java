/*
 * ARX's risk estimates for test/metrics/population-risk-arx.test.ts: for each job on the
 * command line, `<csv>|<delimiter>|<qi,qi,…>|<population size or USA>`, one line of JSON with ARX's
 * sample-based risks and its population uniqueness under Pitman, Zayatz, SNB and Dankar's rule.
 * Every column not named is insensitive; the table is ARX's input handle (nothing suppressed).
 */
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

import org.deidentifier.arx.ARXPopulationModel;
import org.deidentifier.arx.AttributeType;
import org.deidentifier.arx.Data;
import org.deidentifier.arx.DataHandle;
import org.deidentifier.arx.risk.RiskEstimateBuilder;
import org.deidentifier.arx.risk.RiskModelPopulationUniqueness;
import org.deidentifier.arx.risk.RiskModelPopulationUniqueness.PopulationUniquenessModel;
import org.deidentifier.arx.risk.RiskModelSampleRisks;

public class RiskRun {
    private static final Map<String, DataHandle> HANDLES = new HashMap<>();

    private static DataHandle open(String csv, char delimiter, String qiList) {
        try {
            Data data = Data.create(new File(csv), StandardCharsets.UTF_8, delimiter);
            Set<String> qis = new HashSet<>(Arrays.asList(qiList.split(",")));
            for (String name : data.getHandle().iterator().next()) {
                data.getDefinition().setAttributeType(name, qis.contains(name)
                    ? AttributeType.QUASI_IDENTIFYING_ATTRIBUTE : AttributeType.INSENSITIVE_ATTRIBUTE);
            }
            return data.getHandle();
        } catch (java.io.IOException e) {
            throw new RuntimeException(e);
        }
    }

    public static void main(String[] args) throws Exception {
        for (String job : args) {
            String[] f = job.split("\\|");
            // One handle per table and QI set: the populations of a table share it.
            DataHandle handle = HANDLES.computeIfAbsent(f[0] + "|" + f[2], key -> open(f[0], f[1].charAt(0), f[2]));
            ARXPopulationModel model = f[3].equals("USA")
                ? ARXPopulationModel.create(ARXPopulationModel.Region.USA)
                : ARXPopulationModel.create(Long.parseLong(f[3]));
            RiskEstimateBuilder risk = handle.getRiskEstimator(model);
            RiskModelSampleRisks sample = risk.getSampleBasedReidentificationRisk();
            RiskModelPopulationUniqueness population = risk.getPopulationBasedUniquenessRisk();
            StringBuilder out = new StringBuilder("{");
            out.append("\"populationSize\":").append(model.getPopulationSize()).append(',');
            out.append("\"sampleUniques\":").append(risk.getSampleBasedUniquenessRisk().getFractionOfUniqueRecords());
            out.append(",\"highestRisk\":").append(sample.getHighestRisk());
            out.append(",\"recordsAtHighestRisk\":").append(sample.getFractionOfRecordsAffectedByHighestRisk());
            out.append(",\"averageRisk\":").append(sample.getAverageRisk());
            out.append(",\"prosecutor\":").append(sample.getEstimatedProsecutorRisk());
            out.append(",\"journalist\":").append(sample.getEstimatedJournalistRisk());
            out.append(",\"marketer\":").append(sample.getEstimatedMarketerRisk());
            for (PopulationUniquenessModel m : PopulationUniquenessModel.values()) {
                out.append(",\"").append(m.name().toLowerCase()).append("\":")
                   .append(population.getFractionOfUniqueTuples(m));
            }
            PopulationUniquenessModel chosen = population.getPopulationUniquenessModel();
            out.append(",\"dankarModel\":\"").append(chosen == null ? "null" : chosen.name().toLowerCase()).append("\"}");
            System.out.println(out);
        }
    }
}
