// sfn-local: the local Step Functions service for `make dev` and the tests.
//
// It speaks the part of the Step Functions JSON API that Switchboard uses
// (CreateStateMachine, StartExecution, StartSyncExecution, DescribeExecution,
// StopExecution, SendTaskSuccess, SendTaskFailure, SendTaskHeartbeat,
// GetExecutionHistory) on a loopback port, so the Go SDK reaches it through
// AWS_ENDPOINT_URL_SFN exactly as it reaches AWS. The states themselves are
// executed by aws-local-stepfunctions, a real ASL interpreter (Retry, Catch,
// Parallel, Map, intrinsics, JSONPath); this file only adds what the library
// lacks:
//   - Task states call a Lambda Invoke endpoint (LAMBDA_ENDPOINT, the Go
//     runtime's in-process handlers) with AWS's wire format, and a function
//     error becomes the state error named by its errorType, as in AWS;
//   - .waitForTaskToken: $$.Task.Token mints a token, the Task waits until
//     SendTaskSuccess/SendTaskFailure (or its timeout / heartbeat) closes it;
//   - HeartbeatSeconds, the 256 KiB payload limit, and a Task without a
//     timeout waits (almost) forever as in AWS instead of the library's 60 s.
//
// Environment:
//   SFN_ADDR         host:port to listen on (default 127.0.0.1:0 = a free
//                    port); the chosen address is printed to stderr as
//                    "sfn-local: listening on http://HOST:PORT".
//   LAMBDA_ENDPOINT  base URL of the Lambda Invoke endpoint (required for Tasks)
//   SFN_TIME_SCALE   factor for Retry IntervalSeconds/MaxDelaySeconds, Wait
//                    Seconds and HeartbeatSeconds (default 1; tests use 0.01).
//                    TimeoutSeconds is not scaled: pass a small one instead.
//   SFN_MACHINES     optional JSON file [{name, type, file, substitutions}] to
//                    create at start (file relative to the JSON file).
//   AWS_REGION       region in the ARNs (default us-east-1)
'use strict';
require('./polyfill.cjs');
const http = require('node:http');
const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');
const { StateMachine, ExecutionError, ExecutionTimeoutError, ExecutionAbortedError } = require('aws-local-stepfunctions');
const aslValidator = require('asl-validator');
const validate = aslValidator.default ?? aslValidator;

const REGION = process.env.AWS_REGION || 'us-east-1';
const ACCOUNT = '000000000000';
const LAMBDA = (process.env.LAMBDA_ENDPOINT || '').replace(/\/$/, '');
const SCALE = Number(process.env.SFN_TIME_SCALE || '1');
const MAX_PAYLOAD = 256 * 1024; // Step Functions' limit for inputs, outputs and state results
// AWS waits 99999999 s for a Task without TimeoutSeconds; Node timers hold at
// most 2^31-1 ms, so the local stand-in is ~24.8 days.
const NO_TIMEOUT_SECONDS = Math.floor((2 ** 31 - 1) / 1000);
const TIMEOUT_KEY = 'sfnLocalTimeoutSeconds';

const machines = new Map(); // stateMachineArn -> {name, type, definition}
const executions = new Map(); // executionArn -> execution record
const tokens = new Map(); // taskToken -> {resolve, reject, beat?}

// StatesError is an error with a Step Functions error name: the name is what
// Retry/Catch ErrorEquals match and what the API returns as __type.
class StatesError extends Error {
  constructor(name, cause) { super(cause ?? ''); this.name = name; }
}

function substitute(text, subs) {
  return text.replace(/\$\{([A-Za-z0-9_]+)\}/g, (m, k) => (k in subs ? subs[k] : m));
}

function walkStates(states, fn) {
  for (const [name, s] of Object.entries(states)) {
    fn(name, s);
    if (s.Type === 'Parallel') for (const b of s.Branches) walkStates(b.States, fn);
    if (s.Type === 'Map') walkStates((s.ItemProcessor ?? s.Iterator).States, fn);
  }
}

// localDefinition is the definition as this runtime executes it: times
// scaled, and Tasks without a timeout given AWS's (near) endless one.
function localDefinition(def) {
  const d = structuredClone(def);
  walkStates(d.States, (_, s) => {
    for (const r of s.Retry ?? []) {
      r.IntervalSeconds = (r.IntervalSeconds ?? 1) * SCALE;
      if (r.MaxDelaySeconds) r.MaxDelaySeconds *= SCALE;
    }
    if (s.Type === 'Wait' && s.Seconds) s.Seconds *= SCALE;
    if (s.Type === 'Task' && s.TimeoutSeconds === undefined && s.TimeoutSecondsPath === undefined) {
      s.TimeoutSeconds = NO_TIMEOUT_SECONDS;
    }
    // AWS reads TimeoutSecondsPath from the state input; the library reads
    // it from the input after Parameters. Carry the value through
    // Parameters under a private key (taskHandler removes it again).
    if (s.Type === 'Task' && s.TimeoutSecondsPath !== undefined && s.Parameters !== undefined) {
      s.Parameters[`${TIMEOUT_KEY}.$`] = s.TimeoutSecondsPath;
      s.TimeoutSecondsPath = `$.${TIMEOUT_KEY}`;
    }
  });
  return d;
}

function createMachine({ name, definition, type = 'STANDARD', substitutions = {} }) {
  if (!/^[A-Za-z0-9_-]{1,80}$/.test(name ?? '')) throw new StatesError('InvalidName', `Invalid Name: '${name}'`);
  if (type !== 'STANDARD' && type !== 'EXPRESS') throw new StatesError('ValidationException', `type ${type}: want STANDARD or EXPRESS`);
  let def;
  try {
    def = JSON.parse(substitute(definition, substitutions));
  } catch (e) {
    throw new StatesError('InvalidDefinition', `Invalid State Machine Definition: ${e.message}`);
  }
  if (JSON.stringify(def).includes('"QueryLanguage":"JSONata"')) {
    throw new StatesError('InvalidDefinition', 'sfn-local runs JSONPath definitions only (aws-local-stepfunctions does not execute JSONata)');
  }
  const { isValid, errorsText } = validate(def, { checkArn: true, checkPaths: true });
  if (!isValid) throw new StatesError('InvalidDefinition', `Invalid State Machine Definition: ${errorsText('; ')}`);
  const arn = `arn:aws:states:${REGION}:${ACCOUNT}:stateMachine:${name}`;
  machines.set(arn, { name, type, definition: localDefinition(def), created: new Date() });
  return arn;
}

function checkSize(what, json) {
  if (json !== undefined && Buffer.byteLength(json) > MAX_PAYLOAD) {
    throw new StatesError('States.DataLimitExceeded', `${what} is ${Buffer.byteLength(json)} bytes, over the 262144-byte limit`);
  }
}

// invokeLambda calls the Lambda Invoke API. A function error (the handler
// returned an error) becomes a StatesError named by its errorType with the
// whole error payload as cause, which is how Step Functions reports it.
async function invokeLambda(fn, payload) {
  if (!LAMBDA) throw new StatesError('Lambda.ServiceException', 'sfn-local: LAMBDA_ENDPOINT is not set');
  const parts = String(fn).split(':');
  const name = parts.length >= 7 ? parts[6] : String(fn); // function ARN -> name
  let res;
  try {
    res = await post(`${LAMBDA}/2015-03-31/functions/${encodeURIComponent(name)}/invocations`, JSON.stringify(payload ?? null));
  } catch (e) {
    throw new StatesError('Lambda.SdkClientException', `invoke ${name}: ${e.message}`);
  }
  const text = res.body;
  if (res.headers['x-amz-function-error']) {
    let body = {};
    try { body = JSON.parse(text); } catch { /* keep {} */ }
    throw new StatesError(body.errorType || 'Lambda.Unknown', text);
  }
  if (res.status < 200 || res.status > 299) {
    throw new StatesError(`Lambda.${res.headers['x-amzn-errortype'] || 'ServiceException'}`, text);
  }
  checkSize(`the result of ${name}`, text);
  return text ? JSON.parse(text) : null;
}

// post sends one request on a fresh connection. (A pooled keep-alive
// connection that the Go server has just closed would fail the call
// spuriously as Lambda.SdkClientException; loopback connections are cheap.)
function post(url, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

// findToken returns the minted, unclaimed token of exec that the Task's
// input carries (its Parameters put $$.Task.Token somewhere in it).
function findToken(value, exec) {
  if (typeof value === 'string') return exec.minted.has(value) ? value : null;
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) {
      const t = findToken(v, exec);
      if (t) return t;
    }
  }
  return null;
}

// timeoutSeconds reads the Task's timeout the way the library does, for
// forgetting a token when its Task has timed out. Only literal values and
// plain $.a.b paths are understood; otherwise the token lives until the
// execution ends.
function timeoutSeconds(state, input) {
  if (state.TimeoutSeconds !== undefined) return state.TimeoutSeconds;
  const m = /^\$((?:\.[A-Za-z0-9_]+)+)$/.exec(state.TimeoutSecondsPath ?? '');
  if (!m) return undefined;
  const v = m[1].slice(1).split('.').reduce((o, k) => (o == null ? o : o[k]), input);
  return typeof v === 'number' ? v : undefined;
}

function taskHandler(state, exec) {
  const resource = state.Resource;
  const waits = resource.endsWith('.waitForTaskToken');
  const base = resource.replace(/\.(waitForTaskToken|sync(:2)?)$/, '');
  if (/\.sync(:2)?$/.test(resource)) {
    return async () => { throw new StatesError('States.Runtime', `sfn-local: .sync integrations are not supported (${resource})`); };
  }
  return async (effective) => {
    let input = effective;
    if (input && typeof input === 'object' && TIMEOUT_KEY in input) {
      const limit = input[TIMEOUT_KEY];
      input = { ...input };
      delete input[TIMEOUT_KEY];
      effective = { [TIMEOUT_KEY]: limit };
    }
    let token;
    let waiter;
    const cleanups = [];
    if (waits) {
      token = findToken(input, exec);
      if (!token) throw new StatesError('States.Runtime', `sfn-local: ${resource} needs $$.Task.Token in its Parameters`);
      exec.minted.delete(token);
      waiter = Promise.withResolvers();
      // The token can be closed while the Lambda that received it is still
      // returning, before anything awaits the waiter; a rejection then must
      // not count as unhandled (Node would exit). The await below still sees it.
      waiter.promise.catch(() => {});
      const entry = { resolve: waiter.resolve, reject: waiter.reject };
      if (state.HeartbeatSeconds) {
        entry.beat = () => {
          clearTimeout(entry.heartbeat);
          entry.heartbeat = setTimeout(() => waiter.reject(new StatesError('States.HeartbeatTimeout', '')), state.HeartbeatSeconds * SCALE * 1000);
        };
        entry.beat();
        cleanups.push(() => clearTimeout(entry.heartbeat));
      }
      // The library rejects the Task at its timeout without telling us; the
      // token must stop working then too.
      const limit = timeoutSeconds(state, effective);
      if (limit !== undefined) {
        const t = setTimeout(() => waiter.reject(new StatesError('States.Timeout', '')), limit * 1000);
        cleanups.push(() => clearTimeout(t));
      }
      tokens.set(token, entry);
      exec.tokens.add(token);
      cleanups.push(() => { tokens.delete(token); exec.tokens.delete(token); });
    }
    try {
      let result;
      if (base === 'arn:aws:states:::lambda:invoke') {
        const payload = await invokeLambda(input.FunctionName, input.Payload);
        result = { ExecutedVersion: '$LATEST', Payload: payload, StatusCode: 200, SdkHttpMetadata: {}, SdkResponseMetadata: {} };
      } else if (base.startsWith('arn:aws:lambda:')) {
        result = await invokeLambda(base, input);
      } else {
        throw new StatesError('States.Runtime', `sfn-local: unsupported Resource ${resource}`);
      }
      return waits ? await waiter.promise : result;
    } finally {
      cleanups.forEach((f) => f());
    }
  };
}

function startExecution(machineArn, input, name) {
  const m = machines.get(machineArn);
  if (!m) throw new StatesError('StateMachineDoesNotExist', `State Machine Does Not Exist: '${machineArn}'`);
  input = input ?? '{}';
  checkSize('the execution input', input);
  let parsed;
  try { parsed = JSON.parse(input); } catch (e) { throw new StatesError('InvalidExecutionInput', e.message); }
  name = name || crypto.randomUUID();
  const executionArn = m.type === 'EXPRESS'
    ? `arn:aws:states:${REGION}:${ACCOUNT}:express:${m.name}:${name}:${crypto.randomUUID()}`
    : `arn:aws:states:${REGION}:${ACCOUNT}:execution:${m.name}:${name}`;
  const existing = executions.get(executionArn);
  if (existing) {
    // AWS: the same name and input again is the same execution.
    if (existing.input === input) return existing;
    throw new StatesError('ExecutionAlreadyExists', `Execution Already Exists: '${executionArn}'`);
  }
  const exec = {
    executionArn, stateMachineArn: machineArn, type: m.type, name, status: 'RUNNING', startDate: new Date(), input,
    minted: new Set(), tokens: new Set(), events: [],
  };
  executions.set(executionArn, exec);
  const overrides = { taskResourceLocalHandlers: {} };
  walkStates(m.definition.States, (stateName, s) => {
    if (s.Type === 'Task') overrides.taskResourceLocalHandlers[stateName] = taskHandler(s, exec);
  });
  const context = {
    Execution: { Id: executionArn, Name: name, Input: parsed, StartTime: exec.startDate.toISOString(), RoleArn: `arn:aws:iam::${ACCOUNT}:role/sfn-local` },
    StateMachine: { Id: machineArn, Name: m.name },
    // Reading $$.Task.Token mints a token; the Task that receives it in
    // its input claims it (findToken), so concurrent Map/Parallel
    // iterations cannot mix tokens up.
    Task: {
      get Token() {
        const t = crypto.randomBytes(32).toString('base64url');
        exec.minted.add(t);
        return t;
      },
    },
  };
  const sm = new StateMachine(m.definition, { validationOptions: { noValidate: true } });
  const run = sm.run(parsed, { overrides, context });
  exec.abort = run.abort;
  (async () => { for await (const ev of run.eventLogs) exec.events.push(ev); })().catch(() => {});
  exec.done = run.result.then(
    (out) => {
      const json = JSON.stringify(out ?? null);
      if (Buffer.byteLength(json) > MAX_PAYLOAD) {
        exec.status = 'FAILED'; exec.error = 'States.DataLimitExceeded'; exec.cause = 'the execution output is over the 262144-byte limit';
      } else {
        exec.status = 'SUCCEEDED'; exec.output = json;
      }
    },
    (err) => {
      if (err instanceof ExecutionTimeoutError) { exec.status = 'TIMED_OUT'; exec.error = 'States.Timeout'; return; }
      if (err instanceof ExecutionAbortedError) { exec.status = 'ABORTED'; return; }
      const e = err instanceof ExecutionError ? err.cause : err;
      exec.status = 'FAILED'; exec.error = e?.name ?? 'States.Runtime'; exec.cause = e?.message ?? String(err);
    },
  ).finally(() => {
    exec.stopDate = new Date();
    for (const t of exec.tokens) tokens.delete(t);
    exec.minted.clear();
  });
  return exec;
}

const seconds = (d) => d && d.getTime() / 1000;

function describe(exec) {
  const o = {
    executionArn: exec.executionArn, stateMachineArn: exec.stateMachineArn, name: exec.name,
    status: exec.status, startDate: seconds(exec.startDate), input: exec.input,
  };
  if (exec.stopDate) o.stopDate = seconds(exec.stopDate);
  if (exec.output !== undefined) o.output = exec.output;
  if (exec.error) o.error = exec.error;
  if (exec.cause) o.cause = exec.cause;
  return o;
}

// standardExecution finds an execution the API may describe: AWS keeps no
// history of Express executions (they go to CloudWatch Logs), so
// DescribeExecution and GetExecutionHistory refuse them here too.
function standardExecution(arn) {
  if (!/^arn:aws[a-z-]*:states:[^:]+:\d+:(execution:[^:]+:[^:]+|express:[^:]+:[^:]+:[^:]+)$/.test(arn ?? '')) {
    throw new StatesError('InvalidArn', `Invalid Arn: '${arn}'`);
  }
  const e = executions.get(arn);
  if (!e) throw new StatesError('ExecutionDoesNotExist', `Execution Does Not Exist: '${arn}'`);
  if (e.type === 'EXPRESS') throw new StatesError('StateMachineTypeNotSupported', 'This operation is not supported by EXPRESS state machines');
  return e;
}

function token(arn) {
  const t = tokens.get(arn);
  if (!t) throw new StatesError('TaskTimedOut', 'Task Timed Out');
  return t;
}

const ops = {
  async CreateStateMachine(b) {
    const arn = createMachine({ name: b.name, definition: b.definition, type: b.type });
    return { stateMachineArn: arn, creationDate: Date.now() / 1000 };
  },
  async StartExecution(b) {
    const e = startExecution(b.stateMachineArn, b.input, b.name);
    return { executionArn: e.executionArn, startDate: seconds(e.startDate) };
  },
  async StartSyncExecution(b) {
    const m = machines.get(b.stateMachineArn);
    if (m && m.type !== 'EXPRESS') throw new StatesError('StateMachineTypeNotSupported', 'This operation is not supported by STANDARD state machines');
    const e = startExecution(b.stateMachineArn, b.input, b.name);
    await e.done;
    return describe(e);
  },
  async DescribeExecution(b) { return describe(standardExecution(b.executionArn)); },
  async StopExecution(b) {
    const e = standardExecution(b.executionArn);
    if (e.status === 'RUNNING') {
      e.abort();
      await e.done;
      // AWS keeps the stop's error and cause on the aborted execution.
      if (b.error) e.error = b.error;
      if (b.cause) e.cause = b.cause;
    }
    return { stopDate: seconds(e.stopDate) };
  },
  async SendTaskSuccess(b) {
    checkSize('the task output', b.output);
    let out;
    try { out = JSON.parse(b.output); } catch (e) { throw new StatesError('InvalidOutput', e.message); }
    token(b.taskToken).resolve(out);
    return {};
  },
  async SendTaskFailure(b) { token(b.taskToken).reject(new StatesError(b.error ?? '', b.cause ?? '')); return {}; },
  async SendTaskHeartbeat(b) { token(b.taskToken).beat?.(); return {}; },
  async GetExecutionHistory(b) {
    const e = standardExecution(b.executionArn);
    const events = awsHistory(e);
    if (b.reverseOrder) events.reverse();
    return { events };
  },
};

// awsHistory turns the library's event log into AWS's history events (the
// types and *EventDetails fields of GetExecutionHistory), so that code
// reading a history reads the local one as it reads AWS's: a Task state is
// TaskStateEntered, then per attempt TaskScheduled, TaskStarted and
// TaskSucceeded / TaskFailed / TaskTimedOut, then TaskStateExited; a retry
// is one more TaskScheduled in the same state. All in one page.
function awsHistory(e) {
  const out = [];
  const failed = new Map(); // Task state name → its last attempt failed
  const json = (v) => (v === undefined ? undefined : JSON.stringify(v));
  const add = (ev, type, details) => {
    out.push({ id: out.length + 1, previousEventId: out.length, timestamp: ev.timestamp / 1000, type, ...details });
  };
  const task = { resourceType: 'lambda', resource: 'invoke' };
  const attempt = (ev) => {
    add(ev, 'TaskScheduled', { taskScheduledEventDetails: { ...task, region: REGION, parameters: '{}' } });
    add(ev, 'TaskStarted', { taskStartedEventDetails: task });
  };
  for (const ev of e.events) {
    const s = ev.state || {};
    switch (ev.type) {
      case 'ExecutionStarted':
        add(ev, 'ExecutionStarted', { executionStartedEventDetails: { input: e.input } });
        break;
      case 'StateEntered':
        add(ev, `${s.type}StateEntered`, { stateEnteredEventDetails: { name: s.name, input: json(s.input) } });
        if (s.type === 'Task') { failed.set(s.name, false); attempt(ev); }
        break;
      case 'StateFailed':
        if (s.type !== 'Task') break;
        failed.set(s.name, true);
        add(ev, ev.Error === 'States.Timeout' ? 'TaskTimedOut' : 'TaskFailed', {
          [ev.Error === 'States.Timeout' ? 'taskTimedOutEventDetails' : 'taskFailedEventDetails']: { ...task, error: ev.Error, cause: ev.Cause },
        });
        break;
      case 'StateRetried':
        if (s.type === 'Task') { failed.set(s.name, false); attempt(ev); }
        break;
      case 'StateExited':
        if (s.type === 'Task' && !failed.get(s.name)) add(ev, 'TaskSucceeded', { taskSucceededEventDetails: task });
        add(ev, `${s.type}StateExited`, { stateExitedEventDetails: { name: s.name, output: json(s.output) } });
        break;
      case 'ExecutionSucceeded':
        add(ev, 'ExecutionSucceeded', { executionSucceededEventDetails: { output: json(ev.output) } });
        break;
      case 'ExecutionFailed':
        add(ev, 'ExecutionFailed', { executionFailedEventDetails: { error: ev.Error, cause: ev.Cause } });
        break;
      case 'ExecutionAborted':
        add(ev, 'ExecutionAborted', {});
        break;
      case 'ExecutionTimeout':
        add(ev, 'ExecutionTimedOut', {});
        break;
      case 'StateCaught':
        break; // AWS records no event of its own: the state exits next
      default:
        add(ev, ev.type, {});
    }
  }
  return out;
}

if (process.env.SFN_MACHINES) {
  const base = path.dirname(path.resolve(process.env.SFN_MACHINES));
  for (const m of JSON.parse(fs.readFileSync(process.env.SFN_MACHINES, 'utf8'))) {
    const definition = fs.readFileSync(path.resolve(base, m.file), 'utf8');
    console.error('sfn-local: created', createMachine({ ...m, definition }));
  }
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', async () => {
    const op = String(req.headers['x-amz-target'] || '').replace(/^AWSStepFunctions\./, '');
    res.setHeader('content-type', 'application/x-amz-json-1.0');
    try {
      if (!Object.hasOwn(ops, op)) throw new StatesError('UnknownOperationException', `sfn-local does not implement ${op || 'this request'}`);
      const out = await ops[op](JSON.parse(Buffer.concat(chunks).toString() || '{}'));
      res.end(JSON.stringify(out));
    } catch (e) {
      res.statusCode = e instanceof StatesError ? 400 : 500;
      res.end(JSON.stringify({ __type: e instanceof StatesError ? e.name : 'InternalServerError', message: e.message }));
    }
  });
});
const [host, port] = (process.env.SFN_ADDR || '127.0.0.1:0').split(':');
server.listen(Number(port), host, () => {
  const a = server.address();
  console.error(`sfn-local: listening on http://${a.address}:${a.port} (lambda ${LAMBDA || 'unset'}, time scale ${SCALE})`);
});
