import { useEffect, useState, useSyncExternalStore } from 'react';

import { ApprovalButtons, type ApprovalAnswer } from './message-list.js';
import type { Cost, StepBar, TimelineRecorder, ToolBar, TurnTimeline, Usage } from './timeline-recorder.js';

/**
 * The step timeline of a chat: per response stream, each step's model stream as a bar, and under
 * it each tool call as a bar from the call's completion to its result (so tools that run while the
 * model still streams overlap its bar), in call order, with results, approvals, usage and cost.
 */
export function StepTimeline({ recorder, onApproval }: { readonly recorder: TimelineRecorder; readonly onApproval: ApprovalAnswer }) {
  useSyncExternalStore(recorder.subscribe, () => recorder.version);
  const live = recorder.turns.some((turn) => turn.endAt === undefined);
  const now = useNow(live);
  if (recorder.turns.length === 0) return <p className="empty">Steps appear here as a turn streams.</p>;
  return (
    <div className="turns">
      {recorder.turns.map((turn) => (
        <Turn key={turn.number} turn={turn} now={now} onApproval={onApproval} />
      ))}
    </div>
  );
}

/** `performance.now()`, re-rendered every 100 ms while `live`. */
function useNow(live: boolean): number {
  const [now, setNow] = useState(() => performance.now());
  useEffect(() => {
    if (!live) return undefined;
    const timer = setInterval(() => setNow(performance.now()), 100);
    return () => clearInterval(timer);
  }, [live]);
  return live ? now : performance.now();
}

function Turn({ turn, now, onApproval }: { readonly turn: TurnTimeline; readonly now: number; readonly onApproval: ApprovalAnswer }) {
  const elapsed = turn.endAt ?? Math.max(0, now - turn.startedAt);
  const span = Math.max(elapsed, 1);
  return (
    <section className="turn" data-turn={turn.number} data-origin={turn.origin} data-outcome={turn.outcome?.kind ?? 'running'}>
      <h3>
        {turn.origin === 'resume' ? `Turn ${turn.number}, resumed` : turn.approvedCalls.length > 0 ? `Turn ${turn.number}, after the approval` : `Turn ${turn.number}`} · {seconds(elapsed)}
        {turn.outcome !== undefined && <span className={`outcome ${turn.outcome.kind}`}> · {turn.outcome.kind}{turn.outcome.text === '' ? '' : `: ${turn.outcome.text}`}</span>}
      </h3>
      {turn.origin === 'resume' && <p className="note">Replayed from the turn's start: the times are when the chunks arrived here.</p>}
      {turn.approvedCalls.length > 0 && (
        <div className="step approved-calls">
          <div className="row">
            <span className="label">approved</span>
            <span className="track" />
            <span className="info">the calls that waited</span>
          </div>
          {turn.approvedCalls.map((tool) => (
            <Tool key={tool.toolCallId} tool={tool} span={span} elapsed={elapsed} onApproval={onApproval} />
          ))}
        </div>
      )}
      {turn.steps.map((step) => (
        <Step key={step.index} step={step} number={turn.stepOffset + step.index + 1} span={span} elapsed={elapsed} onApproval={onApproval} />
      ))}
      {turn.usage !== undefined && (
        <p className="usage turn-usage">
          Turn: {usageText(turn.usage)}
          {turn.cost !== undefined && <> · <span className={turn.cost === null ? 'cost unknown' : 'cost'}>{costText(turn.cost)}</span></>}
        </p>
      )}
    </section>
  );
}

function Step({ step, number, span, elapsed, onApproval }: { readonly step: StepBar; readonly number: number; readonly span: number; readonly elapsed: number; readonly onApproval: ApprovalAnswer }) {
  const streamEnd = step.streamEndAt ?? step.endAt ?? elapsed;
  return (
    <div className="step" data-step={step.index} data-start={round(step.startAt)} data-stream-end={round(streamEnd)} data-end={step.endAt === undefined ? '' : round(step.endAt)}>
      <div className="row">
        <span className="label">step {number}</span>
        <span className="track">
          <Bar className={`bar stream ${step.endAt === undefined ? 'open' : ''}`} from={step.startAt} to={streamEnd} span={span} />
          {step.endAt !== undefined && step.endAt > streamEnd && <Bar className="bar wait" from={streamEnd} to={step.endAt} span={span} />}
        </span>
        <span className="info">
          {seconds(streamEnd - step.startAt)}
          {step.usage !== undefined && ` · ${usageText(step.usage)}`}
          {step.cost !== undefined && (
            <>
              {' · '}
              <span className={step.cost === null ? 'cost unknown' : 'cost'} title={step.model === undefined ? undefined : step.cost === null ? `${step.model} has no price` : step.model}>
                {costText(step.cost)}
              </span>
            </>
          )}
        </span>
      </div>
      {step.retries.map((retry, index) => (
        <div key={`retry-${index}`} className="row retry" data-attempt={retry.attempt}>
          <span className="label">↻ attempt {retry.attempt} failed</span>
          <span className="track">
            <span className="mark" style={{ left: `${Math.min((100 * retry.at) / span, 99.5)}%` }} />
          </span>
          <span className="info" title={retry.error}>
            {retry.delayMs === undefined ? '' : `again in ${seconds(retry.delayMs)} · `}
            {retry.error}
          </span>
        </div>
      ))}
      {step.tools.map((tool) => (
        <Tool key={tool.toolCallId} tool={tool} span={span} elapsed={elapsed} onApproval={onApproval} />
      ))}
    </div>
  );
}

function Tool({ tool, span, elapsed, onApproval }: { readonly tool: ToolBar; readonly span: number; readonly elapsed: number; readonly onApproval: ApprovalAnswer }) {
  const from = tool.calledAt ?? tool.inputStartAt ?? elapsed;
  const to = tool.endedAt ?? elapsed;
  return (
    <div className="row tool" data-tool-call-id={tool.toolCallId} data-state={tool.state} data-called-at={tool.calledAt === undefined ? '' : round(tool.calledAt)} data-ended-at={tool.endedAt === undefined ? '' : round(tool.endedAt)}>
      <span className="label">↳ {tool.toolName}</span>
      <span className="track">
        {tool.calledAt !== undefined && <Bar className={`bar tool ${tool.state}`} from={from} to={Math.max(to, from)} span={span} />}
      </span>
      <span className="info" title={tool.result}>
        {tool.state === 'approval-requested' && tool.approvalId !== undefined ? (
          <ApprovalButtons approvalId={tool.approvalId} onApproval={onApproval} />
        ) : (
          <>
            {tool.endedAt !== undefined && tool.calledAt !== undefined && `${seconds(tool.endedAt - tool.calledAt)} · `}
            <span className={`tool-result ${tool.state}`}>{tool.result ?? stateText(tool.state)}</span>
          </>
        )}
      </span>
    </div>
  );
}

function Bar({ className, from, to, span }: { readonly className: string; readonly from: number; readonly to: number; readonly span: number }) {
  const left = (100 * from) / span;
  const width = Math.max((100 * (to - from)) / span, 0.5);
  return <span className={className} style={{ left: `${left}%`, width: `${Math.min(width, 100 - left)}%` }} />;
}

function stateText(state: ToolBar['state']): string {
  switch (state) {
    case 'input-streaming':
      return 'arguments streaming';
    case 'running':
      return 'running';
    case 'approval-requested':
      return 'waits for approval';
    default:
      return state;
  }
}

/** `in 12 · out 40 tokens (3 cached)`. */
export function usageText(usage: Usage): string {
  const cached = usage.cachedInputTokens ? ` (${usage.cachedInputTokens} cached)` : '';
  return `in ${usage.inputTokens ?? 0} · out ${usage.outputTokens ?? 0} tokens${cached}`;
}

/** `$0.00120`, or `cost unknown` (the model has no price: never shown as 0). */
function costText(cost: Exclude<Cost, undefined>): string {
  if (cost === null) return 'cost unknown';
  return `$${cost.toFixed(cost < 0.01 ? 5 : 3)}`;
}

function seconds(ms: number): string {
  return `${(Math.max(0, ms) / 1000).toFixed(2)} s`;
}

function round(ms: number): string {
  return String(Math.round(ms));
}
