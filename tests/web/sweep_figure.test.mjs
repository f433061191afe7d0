// web/lib/sweep_figure.js under Node: ticks, the figure's data from records and the merged document, hover rows.
import {test} from 'node:test';
import assert from 'node:assert/strict';
import {figureData, niceTicks, pointRows} from '../../web/lib/sweep_figure.js';

test('niceTicks covers the maximum with round steps', () => {
  assert.deepEqual(niceTicks(93), {ticks: [0, 20, 40, 60, 80, 100], lo: 0, top: 100});
  assert.deepEqual(niceTicks(0), {ticks: [0, 1], lo: 0, top: 1});
  assert.deepEqual(niceTicks(102, 5, 61), {ticks: [60, 70, 80, 90, 100, 110], lo: 60, top: 110});
  assert.equal(niceTicks(738.9).top, 800);
});

test('figureData marks frontier and best points from the merged document, partial without it', () => {
  const expansion = {points: [{index: 0, group: 'C'}, {index: 1, group: 'PD'}, {index: 2, group: 'PD'}]};
  const records = [
    {index: 2, id: 'c', group: 'PD', status: 'ok', x: 3, y: 1, meets_sla: true},
    {index: 0, id: 'a', group: 'C', status: 'ok', x: 1, y: 5, meets_sla: false},
    {index: 1, id: 'b', group: 'PD', status: 'filtered', reason: 'unbuildable: x'},
  ];
  const partial = figureData(expansion, records, null);
  assert.deepEqual(partial.groups, ['C', 'PD']);
  assert.deepEqual(partial.points.map((p) => p.id), ['a', 'c']);
  assert.equal(partial.final, false);
  assert.equal(partial.best, null);
  const done = figureData(expansion, records, {frontiers: {PD: ['c']}, best: 'c'});
  assert.equal(done.best.id, 'c');
  assert.deepEqual(done.frontiers.PD.map((p) => p.id), ['c']);
  assert.deepEqual(done.points.map((p) => p.onFrontier), [false, true]);
});

test('pointRows lists the assignment then the metrics', () => {
  const rows = pointRows({id: 'pt-1', assignment: {arch: 'P/D 1:1', tp: 2}, x: 80.04, y: 672.31, meets_sla: true,
    metrics: {p95_ttft_ms: 120.5, p95_tpot_ms: 12.345, num_gpus: 4}});
  assert.deepEqual(rows.slice(0, 5), [['id', 'pt-1'], ['arch', 'P/D 1:1'], ['tp', '2'], ['tokens/s per user', '80.0'], ['output tok/s per GPU', '672.3']]);
  assert.deepEqual(rows.at(-1), ['meets SLA', 'yes']);
});
