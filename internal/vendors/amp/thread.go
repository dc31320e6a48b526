// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package amp maps Amp (ampcode) thread files
// ($AMP_DATA_DIR/threads/T-<uuid>.json, default
// ~/.local/share/amp/threads) to agentevent events. A thread is one JSON
// object the CLI rewrites in place as the thread grows: the reader decodes
// every version it sees (DecodeThread) and maps what it has not emitted yet
// (MapThread with a Watermark). The package is pure: no I/O. README.md holds
// the mapping table.
package amp

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/jsonx"
)

// Unparsed reasons (the shared ones of agentevent's parser skeleton).
const (
	// ReasonMalformedJSON: the file is not JSON (caught mid-rewrite).
	ReasonMalformedJSON = agentevent.ReasonMalformedJSON
	// ReasonUnexpectedShape: JSON that is not a thread, or a message or
	// block whose fields do not have the expected shape.
	ReasonUnexpectedShape = agentevent.ReasonUnexpectedShape
	// ReasonUnknownType: a message role or content block type this package
	// does not know.
	ReasonUnknownType = agentevent.ReasonUnknownType
)

// Thread is a decoded thread file. Only what the mapping reads is decoded.
type Thread struct {
	V         int64     `json:"v"`
	ID        string    `json:"id"`
	Created   int64     `json:"created"` // epoch ms
	Title     string    `json:"title"`
	AgentMode string    `json:"agentMode"`
	Env       *env      `json:"env"`
	Messages  []Message `json:"messages"`
	Ledger    *struct {
		Events []LedgerEvent `json:"events"`
	} `json:"usageLedger"`
}

type env struct {
	Initial struct {
		Trees []struct {
			DisplayName string `json:"displayName"`
			URI         string `json:"uri"`
			Repository  *struct {
				URL string `json:"url"`
				Ref string `json:"ref"`
				SHA string `json:"sha"`
			} `json:"repository"`
		} `json:"trees"`
		Platform struct {
			Client        string `json:"client"`
			ClientVersion string `json:"clientVersion"`
			ClientType    string `json:"clientType"`
		} `json:"platform"`
	} `json:"initial"`
}

// Message is one entry of Thread.Messages. A message that does not decode
// keeps its id and raw bytes (Bad set): it costs that message only.
type Message struct {
	MessageID int64   `json:"messageId"`
	Role      string  `json:"role"`
	Content   []Block `json:"content"`
	Meta      *struct {
		SentAt *int64 `json:"sentAt"` // epoch ms
	} `json:"meta"`
	State *struct {
		Type       string `json:"type"`
		StopReason string `json:"stopReason"`
	} `json:"state"`
	Usage     *Usage `json:"usage"`
	AgentMode string `json:"agentMode"`

	Raw jsonx.RawMessage `json:"-"`
	Bad error            `json:"-"`
}

// Block is one content block of a message.
type Block struct {
	Type string `json:"type"`
	// text
	Text string `json:"text"`
	// thinking
	Thinking string `json:"thinking"`
	// tool_use
	ID    string           `json:"id"`
	Name  string           `json:"name"`
	Input jsonx.RawMessage `json:"input"`
	// tool_result
	ToolUseID string `json:"toolUseID"`
	Run       *Run   `json:"run"`
}

// Run is a tool_result's execution: its status and result.
type Run struct {
	Status   string           `json:"status"`
	Result   jsonx.RawMessage `json:"result"`
	Error    jsonx.RawMessage `json:"error"`
	Progress jsonx.RawMessage `json:"progress"`
}

// Usage is an assistant message's usage: the model call that wrote it.
type Usage struct {
	Model                    string   `json:"model"`
	InputTokens              int64    `json:"inputTokens"`
	OutputTokens             int64    `json:"outputTokens"`
	CacheCreationInputTokens int64    `json:"cacheCreationInputTokens"`
	CacheReadInputTokens     int64    `json:"cacheReadInputTokens"`
	TotalInputTokens         *int64   `json:"totalInputTokens"`
	Credits                  *float64 `json:"credits"`
}

// LedgerEvent is one entry of usageLedger.events: a billed model call. Its
// inference entries repeat the assistant messages' usage; the others
// (title-generation) are calls of their own.
type LedgerEvent struct {
	ID            string   `json:"id"`
	Timestamp     string   `json:"timestamp"`
	Model         string   `json:"model"`
	Credits       *float64 `json:"credits"`
	OperationType string   `json:"operationType"`
	FromMessageID *int64   `json:"fromMessageId"`
	ToMessageID   *int64   `json:"toMessageId"`
	Tokens        struct {
		Input  int64 `json:"input"`
		Output int64 `json:"output"`
	} `json:"tokens"`
}

// DecodeError is a thread file that does not decode as a whole.
type DecodeError struct {
	Reason string
	Err    error
}

func (e *DecodeError) Error() string { return e.Reason + ": " + e.Err.Error() }
func (e *DecodeError) Unwrap() error { return e.Err }

// DecodeThread decodes a thread file. A file that is not JSON (caught
// mid-rewrite: try again at the next change) or not a thread is a
// *DecodeError; a single message of the wrong shape is kept with Bad set.
func DecodeThread(data []byte) (Thread, error) {
	var th Thread
	trimmed := bytes.TrimSpace(data)
	// jsonx.Valid is a linear scan (see there).
	if !jsonx.Valid(trimmed) {
		return th, &DecodeError{Reason: ReasonMalformedJSON, Err: errors.New("not JSON")}
	}
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return th, &DecodeError{Reason: ReasonUnexpectedShape, Err: errors.New("not a JSON object")}
	}
	var outer struct {
		Thread
		Messages []jsonx.RawMessage `json:"messages"`
	}
	if err := jsonx.Unmarshal(trimmed, &outer); err != nil {
		return th, &DecodeError{Reason: ReasonUnexpectedShape, Err: err}
	}
	th = outer.Thread
	if th.ID == "" {
		return th, &DecodeError{Reason: ReasonUnexpectedShape, Err: errors.New("no thread id")}
	}
	th.Messages = make([]Message, 0, len(outer.Messages))
	for i, raw := range outer.Messages {
		var m Message
		if err := jsonx.Unmarshal(raw, &m); err != nil {
			// Keep the message's place: its id when it has one, else its index.
			var id struct {
				MessageID *int64 `json:"messageId"`
			}
			m = Message{MessageID: int64(i)}
			if jsonx.Unmarshal(raw, &id) == nil && id.MessageID != nil {
				m.MessageID = *id.MessageID
			}
			m.Bad = fmt.Errorf("message %d: %w", i, err)
		}
		m.Raw = raw
		th.Messages = append(th.Messages, m)
	}
	return th, nil
}
