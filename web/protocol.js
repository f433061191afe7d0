// servesim worker protocol, version 1: how the page (web/sim_client.js) talks to the simulator worker
// (web/worker.js), which runs the C++ core compiled to WebAssembly.
//
// Every message is a plain object.
//   request   page -> worker   {type, id, args}
//   reply     worker -> page   {type, id, result}          type and id echo the request's
//   progress  worker -> page   {type: 'progress', id, result: {sim_time_s, requests_done, requests_total,
//                                events, status}}           id is the run's; at most ~10 per second,
//                                                           plus one when the run's steps are over
//   error     worker -> page   {type: 'error', id, message [, errors]}   the request failed; `errors`
//                                                           ([{path, message}]) when the scenario is invalid
// `id` is chosen by the page, unique among its pending requests (a positive integer).
//
// Requests:
//   'init'      {}                            -> {version}   loads the module and the profiles manifest
//                                                            (later requests also do)
//   'validate'  {scenario: string}            -> {ok, errors: [{path, message}]}   path is a JSON pointer
//   'run'       {scenario: string, keepTrace: bool}
//                                             -> progress..., then {status, result, benchmark, trace}
//       status: 'completed' | 'cancelled' | 'stopped' (a limit of the scenario was reached);
//       result: the result JSON text; benchmark: the "Serving Benchmark Result" text block;
//       trace: the Chrome/Perfetto trace JSON text when keepTrace, else null.
//       An invalid scenario gets an error reply with `errors`. One run at a time per worker.
//   'cancel'    {runId}                       -> {found}     the run stops between steps; its 'run'
//                                                             reply then has status 'cancelled'
//   Sweeps (docs/sweep.md; the page's SweepPool, web/sweep_pool.js, runs one point per worker at a time).
//   `sweep` is the sweep document's exact text (its hash goes into the merged document). A worker keeps the
//   last sweep it loaded and loads again only when the text differs.
//   'sweep_expand'   {sweep: string}           -> {ok, errors: [{path, message}], sweep, group_by, percentile,
//                                                  sla: {ttft_ms, tpot_ms}, total_gpus, axes: [name],
//                                                  points: [{index, id, group, assignment}]}   (no scenarios)
//   'sweep_point'    {sweep: string, index}    -> {record: string}  evaluate_point's record JSON text: {index,
//                                                  id, group, assignment, status: ok | filtered | failed,
//                                                  reason?, metrics?, x?, y?, meets_sla?}; runs to the end
//                                                  (no progress, no soft cancel: the pool terminates workers)
//   'sweep_scenario' {sweep: string, index}    -> {scenario: string}  the point's resolved scenario JSON
//   'sweep_merge'    {sweep: string, records: [string]}
//                                             -> {ok, error, merged, csv}  merged: byte for byte the
//                                                  sweep.json of `servesim sweep` (without its final newline)
//   'sweep_reframe'  {merged: string, view: {percentile, sla: {ttft_ms, tpot_ms}}}
//                                             -> {merged, csv}  the merged document judged under another
//                                                  percentile and SLA (x, meets_sla, frontiers, best), no point
//                                                  run again; a bad view gets an error with `errors` (its paths)
//   An invalid sweep or an index out of range gets an error reply (with `errors` for an invalid sweep).
// Profiles: the worker fetches the profile files a call needs (web/lib/profiles.js) before answering it; a
// file it cannot fetch gets an error reply naming it ("could not fetch profiles/H100-SXM/vllm/gemm.json: ...").
// A worker that stops answering is terminated and replaced by the page (SimClient.hardCancel).

/** Protocol version, reported by 'init'. */
export const PROTOCOL_VERSION = 1;

/** Request and reply types. */
export const Msg = Object.freeze({
  INIT: 'init',
  VALIDATE: 'validate',
  RUN: 'run',
  CANCEL: 'cancel',
  SWEEP_EXPAND: 'sweep_expand',
  SWEEP_POINT: 'sweep_point',
  SWEEP_SCENARIO: 'sweep_scenario',
  SWEEP_MERGE: 'sweep_merge',
  SWEEP_REFRAME: 'sweep_reframe',
  PROGRESS: 'progress',
  ERROR: 'error',
});

/** Events the worker processes per step before it yields to its event loop (and sees cancel messages). */
export const STEP_EVENTS = 20000;
/** Minimum interval between two progress messages of one run. */
export const PROGRESS_INTERVAL_MS = 100;

/** A request message. */
export const request = (type, id, args = {}) => ({type, id, args});
/** A reply message. */
export const reply = (type, id, result) => ({type, id, result});
/** A progress message for run `id`. */
export const progress = (id, result) => ({type: Msg.PROGRESS, id, result});
/** An error message; `errors` (validation errors) is optional. */
export const error = (id, message, errors) => (errors ? {type: Msg.ERROR, id, message, errors} : {type: Msg.ERROR, id, message});
