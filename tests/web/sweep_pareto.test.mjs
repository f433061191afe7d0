// web/lib/sweep_pareto.js under Node: a record judged under a percentile and SLA, and the frontiers and best
// point against a brute-force reading of pareto.cc's rules (on random points with many ties).
import {test} from 'node:test';
import assert from 'node:assert/strict';
import {frameRecord, judge, paretoFrontiers} from '../../web/lib/sweep_pareto.js';

const metrics = (o) => ({failed: 0, output_throughput_per_gpu: 100, p50_tpot_ms: 10, p50_ttft_ms: 100,
  p90_tpot_ms: 20, p90_ttft_ms: 200, p95_tpot_ms: 25, p95_ttft_ms: 250, p99_tpot_ms: 50, p99_ttft_ms: 500, ...o});

test('frameRecord takes x, y and meets_sla from the chosen percentile', () => {
  const r = {index: 0, id: 'a', group: 'C', status: 'ok', metrics: metrics({})};
  assert.deepEqual(((x) => [x.x, x.y, x.meets_sla])(frameRecord(r, {percentile: 'p50', sla: {ttft_ms: 100, tpot_ms: 10}})), [100, 100, true]);
  assert.equal(frameRecord(r, {percentile: 'p99', sla: {ttft_ms: 0, tpot_ms: 40}}).meets_sla, false);
  assert.equal(frameRecord(r, {percentile: 'p99', sla: {ttft_ms: 0, tpot_ms: 0}}).x, 20);
  assert.equal(frameRecord({...r, metrics: metrics({failed: 1})}, {percentile: 'p50', sla: {}}).meets_sla, false, 'a failed request misses');
  assert.equal(frameRecord({...r, metrics: metrics({p50_tpot_ms: 0})}, {percentile: 'p50', sla: {}}).x, 0);
  const filtered = {index: 1, id: 'b', status: 'filtered', reason: 'unbuildable: x'};
  assert.equal(frameRecord(filtered, {percentile: 'p50', sla: {}}), filtered);
});

/** pareto.cc read literally: O(n^2) dominance, frontier sorted by x then id, best by y, x, lower id. */
function reference(points) {
  const groups = [...new Set(points.filter((p) => p.status === 'ok').map((p) => p.group))];
  const frontiers = {};
  let best = null;
  for (const g of groups) {
    const inG = points.filter((p) => p.status === 'ok' && p.group === g && p.meets_sla);
    const front = inG.filter((a) => !inG.some((b) => b !== a && b.x >= a.x && b.y >= a.y && (b.x > a.x || b.y > a.y)))
      .sort((a, b) => a.x - b.x || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    for (const p of front) if (!best || p.y > best.y || (p.y === best.y && (p.x > best.x || (p.x === best.x && p.id < best.id)))) best = p;
    frontiers[g] = front.map((p) => p.id);
  }
  return {frontiers, best: best ? best.id : ''};
}

test('paretoFrontiers equals the brute-force rules on random points with ties', () => {
  let seed = 12345;
  const rnd = (n) => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed % n);
  for (let trial = 0; trial < 300; trial++) {
    const n = 1 + rnd(40);
    const points = Array.from({length: n}, (_, i) => ({
      index: i, id: `p${rnd(1000)}-${i}`, group: ['A', 'B', 'C'][rnd(3)], status: rnd(8) ? 'ok' : 'filtered',
      x: rnd(6), y: rnd(6), meets_sla: rnd(5) > 0,
    }));
    assert.deepEqual(paretoFrontiers(points), reference(points), `trial ${trial}`);
  }
});

test('judge sorts by index and frames every record before the frontier', () => {
  const recs = [
    {index: 1, id: 'b', group: 'C', status: 'ok', metrics: metrics({p50_tpot_ms: 5, output_throughput_per_gpu: 50})},
    {index: 0, id: 'a', group: 'C', status: 'ok', metrics: metrics({})},
  ];
  const loose = judge(recs, {percentile: 'p50', sla: {}});
  assert.deepEqual(loose.points.map((p) => p.id), ['a', 'b']);
  assert.deepEqual(loose.frontiers, {C: ['a', 'b']});
  assert.equal(loose.best, 'a');
  const tight = judge(recs, {percentile: 'p50', sla: {tpot_ms: 6}});
  assert.deepEqual(tight.frontiers, {C: ['b']});
  assert.equal(tight.best, 'b', 'a tighter TPOT bound moves the best point');
});
