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
//   'init'      {}                            -> {version}   loads the module (later requests also do)
//   'validate'  {scenario: string}            -> {ok, errors: [{path, message}]}   path is a JSON pointer
//   'run'       {scenario: string, keepTrace: bool}
//                                             -> progress..., then {status, result, benchmark, trace}
//       status: 'completed' | 'cancelled' | 'stopped' (a limit of the scenario was reached);
//       result: the result JSON text; benchmark: the "Serving Benchmark Result" text block;
//       trace: the Chrome/Perfetto trace JSON text when keepTrace, else null.
//       An invalid scenario gets an error reply with `errors`. One run at a time per worker.
//   'cancel'    {runId}                       -> {found}     the run stops between steps; its 'run'
//                                                             reply then has status 'cancelled'
// A worker that stops answering is terminated and replaced by the page (SimClient.hardCancel).

/** Protocol version, reported by 'init'. */
export const PROTOCOL_VERSION = 1;

/** Request and reply types. */
export const Msg = Object.freeze({
  INIT: 'init',
  VALIDATE: 'validate',
  RUN: 'run',
  CANCEL: 'cancel',
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
