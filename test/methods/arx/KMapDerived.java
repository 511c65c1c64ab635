import org.deidentifier.arx.ARXAnonymizer;
import org.deidentifier.arx.ARXConfiguration;
import org.deidentifier.arx.ARXPopulationModel;
import org.deidentifier.arx.ARXResult;
import org.deidentifier.arx.AttributeType;
import org.deidentifier.arx.Data;
import org.deidentifier.arx.criteria.KMap;

/**
 * ARX's class size k' for k-map under an estimated population. Each argument is
 * "k,rows,populationSize,estimator,significance" (estimator: poisson or zero-truncated-poisson);
 * prints "argument=k'" per line, from a release of `rows` identical rows.
 */
public class KMapDerived {
  public static void main(String[] args) throws Exception {
    for (String spec : args) {
      String[] p = spec.split(",");
      int rows = Integer.parseInt(p[1]);
      KMap.CellSizeEstimator estimator = p[3].equals("poisson")
          ? KMap.CellSizeEstimator.POISSON
          : KMap.CellSizeEstimator.ZERO_TRUNCATED_POISSON;
      Data.DefaultData data = Data.create();
      data.add("q");
      for (int r = 0; r < rows; r++) data.add("v");
      data.getDefinition().setAttributeType("q", AttributeType.Hierarchy.create(new String[][] {{"v", "*"}}));
      ARXConfiguration config = ARXConfiguration.create();
      config.addPrivacyModel(new KMap(Integer.parseInt(p[0]), Double.parseDouble(p[4]),
          ARXPopulationModel.create(Long.parseLong(p[2])), estimator));
      config.setSuppressionLimit(1d);
      ARXResult result = new ARXAnonymizer().anonymize(data, config);
      System.out.println(spec + "=" + result.getConfiguration().getPrivacyModel(KMap.class).getDerivedK());
    }
  }
}
