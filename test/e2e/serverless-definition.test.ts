/**
 * The one state machine definition: valid ASL in both forms (checked here once, so the local
 * engine can skip validation at every start), the local rewrite of the Distributed Maps, and
 * Retry/Catch on every Task.
 */
import { StateMachine } from 'aws-local-stepfunctions';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type AslDefinition,
  CRASH_ERRORS,
  DUPLICATE_ERROR,
  distributedMaps,
  listerName,
  localDefinition,
  placeholder,
  RELEASE_ERRORS,
  releaseDefinition,
  TASKS,
  TRANSIENT_ERRORS,
  taskOf,
} from '../../src/pipeline/definition.ts';
import { LOCAL_DEFINITION } from '../../src/pipeline/engine.ts';

beforeAll(() => {
  const P = Promise as unknown as { withResolvers?: unknown };
  P.withResolvers ??= () => {
    let resolve: unknown;
    let reject: unknown;
    const promise = new Promise((a, b) => {
      resolve = a;
      reject = b;
    });
    return { promise, resolve, reject };
  };
});

/** A CloudFormation substitution, `${Name}`. */
const sub = (name: string) => `$${'{'}${name}}`;

const deployed = releaseDefinition({
  resource: (task) => `arn:aws:lambda:us-east-1:111111111111:function:ppdp-${task}`,
});

describe('the release state machine', () => {
  it('is valid ASL as deployed (Distributed Maps) and as run locally (inline Maps)', () => {
    expect(() => new StateMachine(deployed as never)).not.toThrow();
    expect(() => new StateMachine(LOCAL_DEFINITION as never)).not.toThrow();
  });

  it('runs plan → scan → combine → fan-out → merge → verify → publish, with a single-task route', () => {
    const s = deployed.States;
    expect(deployed.StartAt).toBe('Plan');
    expect(s.Plan!.Next).toBe('Scan');
    // The input's pieces are scanned side by side, then combined into the plan the rest follows.
    expect(s.Scan!.ItemReader.Parameters['Key.$']).toBe('$.plan.pieceItems.key');
    expect(s.Scan!.ItemProcessor.StartAt).toBe('ScanPiece');
    expect(s.Scan!.Next).toBe('Combine');
    expect(s.Combine!.ResultPath).toBe('$.plan');
    expect(s.Combine!.Next).toBe('Route');
    expect(s.Route!.Choices[0]).toMatchObject({
      Variable: '$.plan.mode',
      StringEquals: 'single',
      Next: 'Build',
    });
    expect(s.Route!.Default).toBe('Count');
    expect(s.Count!.Next).toBe('Searching');
    // The search, and beside it the audit's count of the distinct values passed through as
    // bytes (its first phase, which needs no node) and those bytes split by output part
    // (ApplyShard's first phase); the node goes on as $.search.
    const searching = s.Searching!;
    expect(searching.Type).toBe('Parallel');
    expect(searching.Next).toBe('Release');
    expect(searching.ResultSelector).toEqual({ 'node.$': '$[0].node' });
    expect(searching.ResultPath).toBe('$.search');
    const [searched, counted, routed] = searching.Branches as AslDefinition[];
    // Only when the release carries columns as their rows' bytes.
    expect(routed!.StartAt).toBe('PassesBytes');
    expect(routed!.States.PassesBytes).toMatchObject({
      Type: 'Choice',
      Choices: [{ Variable: '$.plan.routesBytes', BooleanEquals: true, Next: 'RouteBytes' }],
      Default: 'NoBytes',
    });
    expect(routed!.States.NoBytes).toMatchObject({ Type: 'Pass', End: true });
    expect(routed!.States.RouteBytes!.Next).toBe('HashBytes');
    expect(routed!.States.RouteBytes!.ItemReader.Parameters['Key.$']).toBe('$.plan.items.key');
    expect(routed!.States.RouteBytes!.ItemSelector.phase).toBe('route');
    expect(routed!.States.RouteBytes!.ItemProcessor.StartAt).toBe('RouteShard');
    // Then the rows' hashes of those columns, for the input shards' verification slices.
    expect(routed!.States.HashBytes!.End).toBe(true);
    expect(routed!.States.HashBytes!.ItemReader.Parameters['Key.$']).toBe('$.plan.items.key');
    expect(routed!.States.HashBytes!.ItemSelector.kind).toBe('bytes');
    expect(routed!.States.HashBytes!.ItemProcessor.StartAt).toBe('HashShard');
    expect(searched!.StartAt).toBe('Search');
    expect(searched!.States.Search).toMatchObject({
      Type: 'Task',
      Parameters: { 'work.$': '$.plan.work' },
      End: true,
    });
    expect(counted!.StartAt).toBe('CountDistinct');
    expect(counted!.States.CountDistinct).toMatchObject({
      Type: 'Task',
      Parameters: { 'work.$': '$.plan.work', phase: 'distinct' },
      ResultPath: null,
      End: true,
    });
    // After the search, two branches side by side: the released rows written and their parts
    // summarized, and the input shards' expectations; Verify compares them once both are done.
    const release = s.Release!;
    expect(release.Type).toBe('Parallel');
    expect(release.Next).toBe('Verify');
    expect(release.ResultPath, 'the branches leave their results in the store').toBeNull();
    const [written, expected] = release.Branches as AslDefinition[];
    const w = written!.States;
    expect(written!.StartAt).toBe('Apply');
    expect(w.Apply!.Next).toBe('Parts');
    expect(w.Parts!.Next).toBe('CheckParts');
    expect(w.CheckParts!.End).toBe(true);
    expect(w.Parts!.ItemReader.Parameters['Key.$']).toBe('$.plan.partItems.key');
    // Once the parts are staged, their slices and the audit of the release side by side.
    expect(w.CheckParts!.Type).toBe('Parallel');
    expect(w.CheckParts!.ResultPath).toBeNull();
    const [sliced, audited] = w.CheckParts!.Branches as AslDefinition[];
    const v = sliced!.States;
    expect(sliced!.StartAt).toBe('VerifyParts');
    expect(v.VerifyParts!.End).toBe(true);
    expect(v.VerifyParts!.ItemReader.Parameters['Key.$']).toBe('$.plan.partItems.key');
    expect(v.VerifyParts!.ItemSelector.kind).toBe('part');
    expect(audited!.StartAt).toBe('Audit');
    expect(audited!.States.Audit).toMatchObject({
      Type: 'Task',
      Parameters: { 'work.$': '$.plan.work' },
      ResultPath: null,
      End: true,
    });
    expect(expected!.StartAt).toBe('CheckShards');
    expect(expected!.States.CheckShards!.ItemReader.Parameters['Key.$']).toBe('$.plan.items.key');
    expect(expected!.States.CheckShards!.ItemSelector.kind).toBe('shard');
    expect(expected!.States.CheckShards!.End).toBe(true);
    expect(s.Build!.Next).toBe('Verify');
    expect(s.Verify!.Next).toBe('Publish');
    expect(s.Publish!.End).toBe(true);
    expect(s.ReportFailure!.Next).toBe('Failed');
    expect(s.Failed!.Type).toBe('Fail');
    const maps = { ...s, ...w, ...v, ...expected!.States, ...routed!.States };
    expect(distributedMaps(deployed).sort()).toEqual(
      ['Scan', 'Count', 'RouteBytes', 'HashBytes', 'Apply', 'Parts', 'VerifyParts', 'CheckShards'].sort(),
    );
    for (const map of distributedMaps(deployed)) {
      expect(maps[map]!.ItemProcessor.ProcessorConfig.Mode).toBe('DISTRIBUTED');
      expect(maps[map]!.ItemReader.Resource).toBe('arn:aws:states:::s3:getObject');
      expect(maps[map]!.ResultPath, 'shard results stay in the store, not the payload').toBeNull();
    }
  });

  it('retries transient errors on every Task and sends every failure to ReportFailure', () => {
    const tasks: [string, Record<string, unknown>][] = [];
    const branchStates: [string, Record<string, unknown>][] = [];
    const walk = (d: AslDefinition | { States: AslDefinition['States'] }, inBranch = false) => {
      for (const [name, st] of Object.entries(d.States)) {
        if (st.Type === 'Task') tasks.push([name, st]);
        if (inBranch) branchStates.push([name, st]);
        if (st.ItemProcessor) walk(st.ItemProcessor);
        for (const branch of st.Branches ?? []) walk(branch, true);
      }
    };
    walk(deployed);
    // Every function runs in a state named after it, but VerifySlice, which runs in three, and
    // Audit and ApplyShard, whose first phases run in CountDistinct and RouteShard.
    const names = tasks.map(([n]) => n);
    expect(new Set(names).size, 'state names are unique').toBe(names.length);
    expect([...new Set(names.map(taskOf))].sort()).toEqual([...TASKS].sort());
    expect(names.filter((n) => taskOf(n) !== n).sort()).toEqual([
      'CountDistinct',
      'HashShard',
      'RouteShard',
      'VerifyPart',
      'VerifyShard',
    ]);
    for (const [name, st] of tasks)
      expect(st.Resource, name).toBe(`arn:aws:lambda:us-east-1:111111111111:function:ppdp-${taskOf(name)}`);
    for (const [name, st] of tasks) {
      // ppdp's own refusals first and never retried (States.TaskFailed would match them too),
      // then transient errors, then crashes and timeouts: each retried, within a budget.
      const retry = st.Retry as { ErrorEquals: string[]; MaxAttempts: number }[];
      expect(
        retry.map((r) => r.ErrorEquals),
        name,
      ).toEqual([[...RELEASE_ERRORS, DUPLICATE_ERROR], TRANSIENT_ERRORS, CRASH_ERRORS]);
      expect(
        retry.map((r) => r.MaxAttempts),
        name,
      ).toEqual([0, 3, 2]);
      expect(st.TimeoutSeconds, name).toBe(900);
    }
    // Plan's locks name the execution: a retry or a redrive of it takes them back.
    expect(deployed.States.Plan!.Parameters).toEqual({
      'request.$': '$',
      'execution.$': '$$.Execution.Name',
    });
    for (const [name, st] of tasks) {
      expect(st.TimeoutSeconds, name).toBe(900);
    }
    for (const [name, st] of Object.entries(deployed.States)) {
      if (name === 'ReportFailure' || !['Task', 'Map', 'Parallel'].includes(st.Type)) continue;
      expect(st.Catch, name).toEqual([
        { ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: 'ReportFailure' },
      ]);
    }
    // A branch's states cannot name ReportFailure: their failures are the Parallel state's.
    expect(branchStates.map(([n]) => n).sort()).toEqual(
      [
        'Apply',
        'Audit',
        'CheckParts',
        'CheckShards',
        'CountDistinct',
        'HashBytes',
        'NoBytes',
        'Parts',
        'PassesBytes',
        'RouteBytes',
        'Search',
        'VerifyParts',
      ].sort(),
    );
    for (const [name, st] of branchStates) expect(st.Catch, name).toBeUndefined();
  });

  it('locally, each Distributed Map becomes a lister Task feeding an inline Map', () => {
    const local = localDefinition(deployed);
    const [written, expected] = local.States.Release!.Branches as AslDefinition[];
    const deployedBranches = deployed.States.Release!.Branches as AslDefinition[];
    const sliced = (written!.States.CheckParts!.Branches as AslDefinition[])[0]!;
    const deployedSliced = (deployedBranches[0]!.States.CheckParts!.Branches as AslDefinition[])[0]!;
    const graphs = [
      [local, deployed],
      [written!, deployedBranches[0]!],
      [expected!, deployedBranches[1]!],
      [sliced, deployedSliced],
    ] as const;
    for (const [map, before, graph] of [
      ['Scan', 'Plan', 0],
      ['Count', 'Route', 0],
      ['Apply', undefined, 1],
      ['Parts', 'Apply', 1],
      ['VerifyParts', undefined, 3],
      ['CheckShards', undefined, 2],
    ] as const) {
      const [here, there] = graphs[graph];
      const lister = here.States[listerName(map)]!;
      expect(lister).toMatchObject({ Type: 'Task', ResultPath: '$.mapItems', Next: map });
      expect(lister.Parameters).toEqual(there.States[map]!.ItemReader.Parameters);
      expect(here.States[map]!.ItemsPath).toBe('$.mapItems');
      expect(here.States[map]!.ItemReader).toBeUndefined();
      expect(here.States[map]!.ItemProcessor.ProcessorConfig).toBeUndefined();
      // The state before the map, or the branch's start, now leads to the lister.
      if (before === undefined) expect(here.StartAt).toBe(listerName(map));
      else {
        const st = here.States[before]!;
        expect(st.Next === listerName(map) || st.Default === listerName(map), before).toBe(true);
      }
    }
    // Nothing else changes.
    for (const name of [
      'Combine',
      'Search',
      'Assemble',
      'Build',
      'Verify',
      'Publish',
      'ReportFailure',
      'Failed',
    ]) {
      if (name === 'Route' || name === 'Search') continue;
      expect(local.States[name], name).toEqual(deployed.States[name]);
    }
  });

  it('names CloudFormation placeholders for the deployed ARNs', () => {
    const templated = releaseDefinition({ resource: (t) => `\${${placeholder(t)}}` });
    expect(templated.States.Plan!.Resource).toBe(sub('PlanFunctionArn'));
    expect(templated.States.Count!.ItemProcessor.States.CountShard.Resource).toBe(
      sub('CountShardFunctionArn'),
    );
  });
});
