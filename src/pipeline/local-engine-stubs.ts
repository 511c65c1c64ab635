/**
 * Stand-ins bundled into the CLI for modules aws-local-stepfunctions imports but the local
 * engine never uses: every Task is bound to an in-process handler (so no AWS Lambda client
 * or credentials), and the definition is validated by the tests rather than at each start.
 * Loading the real ones costs 300–400 ms of cold start. See the build:cli script.
 */
const unused = (what: string): never => {
  throw new Error(`${what} is not available in ppdp's local engine: every Task is bound in-process`);
};

export class LambdaClient {
  constructor() {
    unused('AWS Lambda');
  }
}
export class InvokeCommand {}
export function fromCognitoIdentityPool(): never {
  return unused('AWS credentials');
}
export default function aslValidator(): { isValid: boolean; errorsText: () => string } {
  return { isValid: true, errorsText: () => '' };
}
