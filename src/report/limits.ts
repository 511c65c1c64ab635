/**
 * What each release method does not protect against, said next to the verdict: a verified
 * release keeps the guarantees its models state and nothing more.
 */
import type { ReleaseReport } from '../contracts/report.ts';

export interface MethodLimits {
  /** The method leaves re-identification by linkage on the quasi-identifiers open. */
  identityOpen: boolean;
  /** One line: what the guarantees cover. */
  protects: string;
  /** What the method does not protect against. */
  doesNot: string[];
}

const GENERALIZATION_GAPS = [
  'Columns not marked quasi-identifying are released unchanged: an attacker who knows one of them can link on it too.',
  'Attribute disclosure: a class whose rows share one sensitive value reveals it, unless an l-diversity, t-closeness or δ-disclosure model is part of the spec.',
  'Membership disclosure: the release shows whether a person with given quasi-identifiers is in the data whenever the data is the whole population.',
  'Several releases of the same people: their classes can be intersected.',
];

export function methodLimits(report: ReleaseReport): MethodLimits {
  switch (report.spec.method) {
    case 'generalization':
    case 'mondrian':
      return {
        identityOpen: false,
        protects:
          'Re-identification by linkage on the quasi-identifiers: every released row shares its (generalized) quasi-identifier values with the other rows of its class.',
        doesNot: GENERALIZATION_GAPS,
      };
    case 'anatomy':
      return {
        identityOpen: true,
        protects:
          'Only the link to the sensitive attribute: within a bucket every sensitive value is equally possible for every row (at most 1/l each).',
        doesNot: [
          'Identity disclosure: the quasi-identifiers are published exactly, so a person whose combination is rare or unique in the data is found by linkage on them.',
          'Membership disclosure: whether a person is in the data is visible from their exact quasi-identifiers.',
          'Anything the buckets do not hide: a bucket’s sensitive values are published, so knowing a person’s bucket narrows theirs to at most l candidates.',
        ],
      };
    case 'slicing':
      return {
        identityOpen: true,
        protects:
          'The link between columns: within a bucket each column is permuted apart, so which sensitive value belongs to a row is uncertain (at most 1/l for any value).',
        doesNot: [
          'Identity disclosure: each column’s values are published exactly; a person whose values in one column are rare or unique is found by linkage on that column, beyond what the buckets give.',
          'Membership disclosure: whether a person is in the data is visible from their exact column values (see the fake-tuple measures below).',
        ],
      };
    case 'randomization':
      return {
        identityOpen: true,
        protects:
          'What can be learnt about the sensitive attribute: every randomized value is true only with its retention probability, and the per-row disclosure risk is bounded.',
        doesNot: [
          'Identity and membership disclosure: every input row is released, and a randomized value keeps its true value with its retention probability, so most rows still carry their true quasi-identifiers.',
          'Attributes that are not randomized: they are released exactly.',
          'Aggregates: the matrices are published, so counts and distributions can be reconstructed by design.',
        ],
      };
    default:
      return { identityOpen: true, protects: 'The privacy models listed below.', doesNot: [] };
  }
}
