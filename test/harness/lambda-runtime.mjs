// One Lambda invocation in this process, as the Node.js runtime would make it: import the
// handler module named by the function's Handler setting (`<file>.<export>`) from the task
// root, call it with the event and a context, and answer with the result or with the error
// in Lambda's own shape ({ errorType, errorMessage, trace }). The answer goes to the file named
// by PPDP_HARNESS_ANSWER with the process's peak resident memory: the harness watches the
// process's memory while it runs (and kills it past the function's size), and this high-water
// mark catches a peak between two of its reads.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = process.env.LAMBDA_TASK_ROOT;
const [file, exported] = process.env._HANDLER.split('.');
const answerFile = process.env.PPDP_HARNESS_ANSWER;
const event = JSON.parse(readFileSync(process.env.PPDP_HARNESS_EVENT, 'utf8'));
const deadline = Date.now() + Number(process.env.PPDP_HARNESS_TIMEOUT_MS);
const context = {
  awsRequestId: process.env.PPDP_HARNESS_REQUEST_ID,
  functionName: process.env.AWS_LAMBDA_FUNCTION_NAME,
  memoryLimitInMB: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE,
  getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
};

// VmHWM, the peak resident memory of this process image: getrusage's maxRSS would also count
// the parent's memory, which a forked child carries until it executes node (Linux keeps it).
const peakMiB = () => {
  const line = readFileSync('/proc/self/status', 'utf8').match(/^VmHWM:\s+(\d+) kB/m);
  return line ? Number(line[1]) / 1024 : process.resourceUsage().maxRSS / 1024;
};
let answer;
try {
  const mod = await import(pathToFileURL(join(root, `${file}.mjs`)).href);
  if (typeof mod[exported] !== 'function') {
    throw Object.assign(new Error(`${file}.${exported} is undefined or not exported`), {
      name: 'Runtime.HandlerNotFound',
    });
  }
  const result = await mod[exported](event, context);
  answer = { ok: true, result: result ?? null, peakMiB: peakMiB() };
} catch (e) {
  const err = e instanceof Error ? e : new Error(String(e));
  answer = {
    ok: false,
    error: { errorType: err.name, errorMessage: err.message, trace: [] },
    peakMiB: peakMiB(),
  };
}
writeFileSync(answerFile, JSON.stringify(answer));
// Lambda freezes the sandbox after the answer; here the process ends (open sockets included).
process.exit(0);
