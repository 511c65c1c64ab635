/**
 * cdk-nag's AwsSolutions checks on the app. The stack acknowledges its findings one by one,
 * each with its reason (infra/stacks/release-stack.ts); any new finding fails `cdk synth`
 * and test/infra.
 */
import { type App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';

export function addNagChecks(app: App): void {
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
}
