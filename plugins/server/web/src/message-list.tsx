import type { DynamicToolUIPart, UIMessage } from 'ai';

import { shortText } from './timeline-recorder.js';

/** Answers an approval request: the chat's `addToolApprovalResponse`. */
export type ApprovalAnswer = (approvalId: string, approved: boolean) => void;

/** The messages of a chat: text, reasoning, and tool calls with their state; approve/deny buttons when `onApproval` is given. */
export function MessageList({ messages, onApproval }: { readonly messages: readonly UIMessage[]; readonly onApproval?: ApprovalAnswer }) {
  return (
    <ol className="messages">
      {messages.map((message) => (
        <li key={message.id} className={`message ${message.role}`} data-role={message.role}>
          <div className="who">{message.role === 'user' ? 'you' : message.role}</div>
          {message.parts.map((part, index) => {
            switch (part.type) {
              case 'text':
                return (
                  <p key={index} className="text">
                    {part.text}
                  </p>
                );
              case 'reasoning':
                return (
                  <p key={index} className="reasoning">
                    {part.text}
                  </p>
                );
              case 'step-start':
                return index === 0 ? null : <hr key={index} className="step-start" />;
              case 'dynamic-tool':
                return <ToolPart key={index} part={part} {...(onApproval === undefined ? {} : { onApproval })} />;
              default:
                return null;
            }
          })}
        </li>
      ))}
    </ol>
  );
}

function ToolPart({ part, onApproval }: { readonly part: DynamicToolUIPart; readonly onApproval?: ApprovalAnswer }) {
  const input = part.input === undefined ? '' : shortText(part.input);
  return (
    <div className="tool-part" data-tool-call-id={part.toolCallId} data-state={part.state}>
      <code>
        {part.toolName}({input})
      </code>
      {part.state === 'input-available' && <span className="result pending"> running…</span>}
      {part.state === 'output-available' && <span className="result"> → {shortText(part.output)}</span>}
      {part.state === 'output-error' && <span className="result failed"> → {part.errorText}</span>}
      {part.state === 'output-denied' && <span className="result failed"> → denied</span>}
      {part.state === 'approval-requested' && onApproval !== undefined && <ApprovalButtons approvalId={part.approval.id} onApproval={onApproval} />}
      {part.state === 'approval-requested' && onApproval === undefined && <span className="result"> waits for approval</span>}
      {part.state === 'approval-responded' && <span className="result"> {part.approval.approved ? 'approved' : 'denied'}</span>}
    </div>
  );
}

/** Approve and Deny for one approval request. */
export function ApprovalButtons({ approvalId, onApproval }: { readonly approvalId: string; readonly onApproval: ApprovalAnswer }) {
  return (
    <span className="approval">
      <button type="button" className="approve" onClick={() => onApproval(approvalId, true)}>
        Approve
      </button>
      <button type="button" className="deny" onClick={() => onApproval(approvalId, false)}>
        Deny
      </button>
    </span>
  );
}
