// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package opencode

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/jsonx"
)

// Project is storage/project/<id>.json (≤1.1) or a row of the project
// table (≥1.2). ID "global" is the project of directories outside git.
type Project struct {
	ID       string `json:"id"`
	Worktree string `json:"worktree"`
	VCS      string `json:"vcs"`
}

// Session is storage/session/<project>/<id>.json or a row of the session
// table. A child session (one a task tool call created) has ParentID.
type Session struct {
	ID        string `json:"id"`
	ParentID  string `json:"parentID"`
	ProjectID string `json:"projectID"`
	Directory string `json:"directory"`
	Title     string `json:"title"`
	Version   string `json:"version"`
	Time      struct {
		Created int64 `json:"created"`
		Updated int64 `json:"updated"`
	} `json:"time"`
}

// Tokens is the usage of an assistant message or of one step of it. Input
// excludes the cache reads and writes; Output excludes Reasoning (OpenCode
// prices the reasoning tokens on their own).
type Tokens struct {
	Input     int64 `json:"input"`
	Output    int64 `json:"output"`
	Reasoning int64 `json:"reasoning"`
	Cache     struct {
		Read  int64 `json:"read"`
		Write int64 `json:"write"`
	} `json:"cache"`
}

// MessageError is the error an assistant message ended with
// (MessageAbortedError, ProviderAuthError, APIError, UnknownError,
// MessageOutputLengthError, ...).
type MessageError struct {
	Name string           `json:"name"`
	Data jsonx.RawMessage `json:"data"`
}

// Message is storage/message/<session>/<id>.json, the `data` of a row of the
// message table (plus its id and session_id), or the `info` of the server
// API's [{info, parts}].
type Message struct {
	ID        string `json:"id"`
	SessionID string `json:"sessionID"`
	Role      string `json:"role"`
	Time      struct {
		Created   int64  `json:"created"`
		Completed *int64 `json:"completed"`
	} `json:"time"`
	// ParentID is, on an assistant message, the user message it answers.
	ParentID   string `json:"parentID"`
	ModelID    string `json:"modelID"`
	ProviderID string `json:"providerID"`
	// Model is the model a user message asked for.
	Model *struct {
		ProviderID string `json:"providerID"`
		ModelID    string `json:"modelID"`
	} `json:"model"`
	Mode  string `json:"mode"`
	Agent string `json:"agent"`
	Path  *struct {
		Cwd  string `json:"cwd"`
		Root string `json:"root"`
	} `json:"path"`
	Cost   *float64      `json:"cost"`
	Tokens *Tokens       `json:"tokens"`
	Finish string        `json:"finish"`
	Error  *MessageError `json:"error"`
	// Summary is an object on user messages (title, diffs) and true on the
	// assistant message a compaction wrote.
	Summary jsonx.RawMessage `json:"summary"`

	// Raw is the undecoded object.
	Raw []byte `json:"-"`
}

// ToolState is the state of a tool part: pending → running → completed or
// error, rewritten in place.
type ToolState struct {
	Status   string           `json:"status"`
	Input    jsonx.RawMessage `json:"input"`
	Output   string           `json:"output"`
	Error    string           `json:"error"`
	Title    string           `json:"title"`
	Metadata jsonx.RawMessage `json:"metadata"`
	Time     struct {
		Start     *int64 `json:"start"`
		End       *int64 `json:"end"`
		Compacted *int64 `json:"compacted"`
	} `json:"time"`
}

// Part is storage/part/<message>/<id>.json, the `data` of a row of the part
// table, or an element of the server API's parts. Only the fields of the
// part types this package maps are decoded.
type Part struct {
	ID        string `json:"id"`
	SessionID string `json:"sessionID"`
	MessageID string `json:"messageID"`
	Type      string `json:"type"`

	// text, reasoning
	Text      string `json:"text"`
	Synthetic bool   `json:"synthetic"`
	Ignored   bool   `json:"ignored"`
	Time      *struct {
		Start *int64 `json:"start"`
		End   *int64 `json:"end"`
	} `json:"time"`

	// tool
	CallID string     `json:"callID"`
	Tool   string     `json:"tool"`
	State  *ToolState `json:"state"`

	// step-finish
	Reason string   `json:"reason"`
	Cost   *float64 `json:"cost"`
	Tokens *Tokens  `json:"tokens"`

	// patch
	Files []string `json:"files"`

	// compaction
	Auto bool `json:"auto"`

	// retry
	Attempt int64            `json:"attempt"`
	Error   jsonx.RawMessage `json:"error"`

	// Raw is the undecoded object.
	Raw []byte `json:"-"`
}

// MessageWithParts is one element of the server API's
// GET /session/:id/message answer.
type MessageWithParts struct {
	Info  Message `json:"info"`
	Parts []Part  `json:"parts"`
}

// Unparsed reasons (the shared ones of agentevent's parser skeleton).
const (
	// ReasonMalformedJSON: the object is not JSON (e.g. a file cut mid-write).
	ReasonMalformedJSON = agentevent.ReasonMalformedJSON
	// ReasonUnexpectedShape: JSON that is not an object of the expected
	// shape (no id, a field of the wrong JSON type).
	ReasonUnexpectedShape = agentevent.ReasonUnexpectedShape
	// ReasonUnknownType: a part type or message role this package does not know.
	ReasonUnknownType = agentevent.ReasonUnknownType
	// ReasonParserError: the mapping failed on an internal error; the
	// object is kept rather than lost.
	ReasonParserError = agentevent.ReasonParserError
)

// DecodeError is why an object could not be decoded; Reason is one of the
// Reason constants.
type DecodeError struct {
	Reason string
	Err    error
}

func (e *DecodeError) Error() string { return e.Reason + ": " + e.Err.Error() }
func (e *DecodeError) Unwrap() error { return e.Err }

func decodeObject(b []byte, v any) error {
	trimmed := bytes.TrimSpace(b)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		if jsonx.Valid(trimmed) {
			return &DecodeError{ReasonUnexpectedShape, errors.New("not a JSON object")}
		}
		return &DecodeError{ReasonMalformedJSON, errors.New("not JSON")}
	}
	if err := jsonx.Unmarshal(b, v); err != nil {
		reason, _ := agentevent.DecodeFailure(trimmed, err)
		return &DecodeError{reason, err}
	}
	return nil
}

// DecodeProject decodes a project object.
func DecodeProject(b []byte) (Project, error) {
	var p Project
	if err := decodeObject(b, &p); err != nil {
		return Project{}, err
	}
	if p.ID == "" {
		return Project{}, &DecodeError{ReasonUnexpectedShape, errors.New("project has no id")}
	}
	return p, nil
}

// DecodeSession decodes a session object.
func DecodeSession(b []byte) (Session, error) {
	var s Session
	if err := decodeObject(b, &s); err != nil {
		return Session{}, err
	}
	if s.ID == "" {
		return Session{}, &DecodeError{ReasonUnexpectedShape, errors.New("session has no id")}
	}
	return s, nil
}

// DecodeMessage decodes a message object. Raw keeps b.
func DecodeMessage(b []byte) (Message, error) {
	var m Message
	if err := decodeObject(b, &m); err != nil {
		return Message{}, err
	}
	if m.ID == "" {
		return Message{}, &DecodeError{ReasonUnexpectedShape, errors.New("message has no id")}
	}
	m.Raw = b
	return m, nil
}

// DecodePart decodes a part object. Raw keeps b.
func DecodePart(b []byte) (Part, error) {
	var p Part
	if err := decodeObject(b, &p); err != nil {
		return Part{}, err
	}
	if p.ID == "" {
		return Part{}, &DecodeError{ReasonUnexpectedShape, errors.New("part has no id")}
	}
	p.Raw = b
	return p, nil
}

// DecodeAPIMessages decodes the server API's GET /session/:id/message
// answer ([{info, parts}]). Raw of each message and part is its own JSON.
func DecodeAPIMessages(b []byte) ([]MessageWithParts, error) {
	var items []struct {
		Info  jsonx.RawMessage   `json:"info"`
		Parts []jsonx.RawMessage `json:"parts"`
	}
	if err := jsonx.Unmarshal(b, &items); err != nil {
		return nil, &DecodeError{ReasonMalformedJSON, err}
	}
	out := make([]MessageWithParts, 0, len(items))
	for i, it := range items {
		m, err := DecodeMessage(it.Info)
		if err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
		mp := MessageWithParts{Info: m}
		for j, raw := range it.Parts {
			p, err := DecodePart(raw)
			if err != nil {
				return nil, fmt.Errorf("message %d part %d: %w", i, j, err)
			}
			mp.Parts = append(mp.Parts, p)
		}
		out = append(out, mp)
	}
	return out, nil
}

// DecodeMessageRow decodes a row of the message table (≥1.2): its `data`
// column holds the message without id and sessionID, which are columns.
// Raw keeps data.
func DecodeMessageRow(id, sessionID string, data []byte) (Message, error) {
	var m Message
	if err := decodeObject(data, &m); err != nil {
		return Message{}, err
	}
	m.ID, m.SessionID, m.Raw = id, sessionID, data
	return m, nil
}

// DecodePartRow decodes a row of the part table (≥1.2): its `data` column
// holds the part without id, sessionID and messageID. Raw keeps data.
func DecodePartRow(id, messageID, sessionID string, data []byte) (Part, error) {
	var p Part
	if err := decodeObject(data, &p); err != nil {
		return Part{}, err
	}
	p.ID, p.MessageID, p.SessionID, p.Raw = id, messageID, sessionID, data
	return p, nil
}
