/*
 * ARX's side of test/methods/differential-privacy.test.ts: the sampling probability β and the
 * class size k ARX 3.9.2 derives for (ε, δ)-differential privacy (its ParameterCalculation, the
 * one EDDifferentialPrivacy uses with a given generalization). Arguments: `ε:δ` pairs.
 * Prints one tab-separated line per pair: ε, δ, β's IEEE 754 bits in hex, β, k.
 */
import org.deidentifier.arx.dp.ParameterCalculation;

public class DpRun {
    public static void main(String[] args) throws Exception {
        for (String arg : args) {
            String[] parts = arg.split(":");
            double epsilon = Double.parseDouble(parts[0]);
            double delta = Double.parseDouble(parts[1]);
            ParameterCalculation p = new ParameterCalculation(epsilon, delta);
            System.out.println(parts[0] + "\t" + parts[1] + "\t"
                + Long.toHexString(Double.doubleToRawLongBits(p.getBeta())) + "\t" + p.getBeta() + "\t" + p.getK());
        }
    }
}
