// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package gemini maps Gemini CLI session files (chat snapshots in
// ~/.gemini/tmp/<dir>/chats/, the JSONL chat log of CLI v0.39+, and
// logs.json) to normalized agent events. It is pure: readers decode the
// bytes they read (DecodeChat, DecodeChatJSONL, DecodeLogs) and map them
// (MapChat, MapLogs), passing the set of message ids already emitted.
package gemini

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/jsonx"
)

// Message types of a chat.
const (
	TypeUser    = "user"
	TypeGemini  = "gemini"
	TypeInfo    = "info"
	TypeError   = "error"
	TypeWarning = "warning"
)

// Chat kinds (the chat's top-level kind; absent in older files = main).
const (
	KindMain     = "main"
	KindSubagent = "subagent"
)

// Chat is one conversation record: a whole .json snapshot, or the state a
// .jsonl chat log describes once replayed.
type Chat struct {
	SessionID   string    `json:"sessionId"`
	ProjectHash string    `json:"projectHash"`
	StartTime   string    `json:"startTime"`
	LastUpdated string    `json:"lastUpdated"`
	Kind        string    `json:"kind"`
	Summary     string    `json:"summary"`
	Directories []string  `json:"directories"`
	Messages    []Message `json:"messages"`
}

// Message is one entry of messages[].
type Message struct {
	ID             string           `json:"id"`
	Timestamp      string           `json:"timestamp"`
	Type           string           `json:"type"`
	Content        jsonx.RawMessage `json:"content"`
	DisplayContent jsonx.RawMessage `json:"displayContent"`
	Model          string           `json:"model"`
	Thoughts       []Thought        `json:"thoughts"`
	Tokens         *Tokens          `json:"tokens"`
	ToolCalls      []ToolCall       `json:"toolCalls"`
	// Raw is the message as written (kept for Event.Raw).
	Raw jsonx.RawMessage `json:"-"`
	// Bad is why the message could not be decoded whole (a field of an
	// unexpected shape); MapChat makes an unparsed event of it.
	Bad error `json:"-"`
}

// Thought is one entry of a gemini message's thoughts[].
type Thought struct {
	Subject     string `json:"subject"`
	Description string `json:"description"`
	Timestamp   string `json:"timestamp"`
}

// Tokens is a gemini message's usage, as the Gemini API reports it:
// input (promptTokenCount) includes cached; output (candidatesTokenCount)
// excludes thoughts; total = input + output + thoughts + tool.
type Tokens struct {
	Input    int64 `json:"input"`
	Output   int64 `json:"output"`
	Cached   int64 `json:"cached"`
	Thoughts int64 `json:"thoughts"`
	Tool     int64 `json:"tool"`
	Total    int64 `json:"total"`
}

// ToolCall is one entry of a gemini message's toolCalls[]: the call and
// its result together.
type ToolCall struct {
	ID            string           `json:"id"`
	Name          string           `json:"name"`
	Args          jsonx.RawMessage `json:"args"`
	Result        ResultParts      `json:"result"`
	Status        string           `json:"status"`
	Timestamp     string           `json:"timestamp"`
	DisplayName   string           `json:"displayName"`
	ResultDisplay jsonx.RawMessage `json:"resultDisplay"`
}

// ResultParts is a tool call's result: a list of parts as the CLI writes
// it; a single part or a bare string (not seen, but cheap to accept) are
// read as a list of one.
type ResultParts []ResultPart

// UnmarshalJSON accepts a list of parts, one part, a string or null.
func (r *ResultParts) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || string(b) == "null":
		*r = nil
		return nil
	case b[0] == '"':
		var s string
		if err := jsonx.Unmarshal(b, &s); err != nil {
			return err
		}
		*r = ResultParts{{Text: &s}}
		return nil
	case b[0] == '{':
		var p ResultPart
		if err := jsonx.Unmarshal(b, &p); err != nil {
			return err
		}
		*r = ResultParts{p}
		return nil
	}
	var parts []ResultPart
	if err := jsonx.Unmarshal(b, &parts); err != nil {
		return err
	}
	*r = parts
	return nil
}

// ResultPart is one part of a tool call's result: a functionResponse or text.
type ResultPart struct {
	FunctionResponse *struct {
		ID       string           `json:"id"`
		Name     string           `json:"name"`
		Response jsonx.RawMessage `json:"response"`
	} `json:"functionResponse"`
	Text *string `json:"text"`
}

// DecodeError is a file or line that could not be decoded.
type DecodeError struct {
	Reason string // malformed_json, unexpected_shape
	Line   int64  // 1-based line of a JSONL record; 0 for a whole file
	Err    error
}

func (e *DecodeError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s: %v", e.Line, e.Reason, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Reason, e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }

// Decode reasons (the shared ones of agentevent's parser skeleton).
const (
	ReasonMalformedJSON   = agentevent.ReasonMalformedJSON
	ReasonUnexpectedShape = agentevent.ReasonUnexpectedShape
	// ReasonUnknownType: a message type this package does not know.
	ReasonUnknownType = agentevent.ReasonUnknownType
)

// decodeReason tells why data did not decode (agentevent.DecodeFailure): it
// is not JSON at all (malformed_json: a file caught mid-rewrite, a line cut
// mid-write), or JSON of another shape (unexpected_shape).
func decodeReason(data []byte, err error) string {
	reason, _ := agentevent.DecodeFailure(data, err)
	return reason
}

// DecodeChat decodes a whole .json chat snapshot. A file cut mid-write (the
// CLI rewrites it in place) is a malformed_json DecodeError: the reader
// keeps its watermark and tries again on the next change.
func DecodeChat(data []byte) (Chat, error) {
	var raw struct {
		Chat
		Messages []jsonx.RawMessage `json:"messages"`
	}
	if err := jsonx.Unmarshal(data, &raw); err != nil {
		return Chat{}, &DecodeError{Reason: decodeReason(data, err), Err: err}
	}
	if raw.SessionID == "" {
		return Chat{}, &DecodeError{Reason: ReasonUnexpectedShape, Err: errors.New("no sessionId")}
	}
	c := raw.Chat
	c.Messages = nil
	for _, m := range raw.Messages {
		c.Messages = append(c.Messages, decodeMessage(m))
	}
	return c, nil
}

// decodeMessage decodes one message. One that does not decode whole is kept
// with what can be read of it (id, time, type) and Bad set, so that one odd
// field costs that message, not the chat; one without an id gets an id
// hashed from its bytes.
func decodeMessage(b jsonx.RawMessage) Message {
	var m Message
	err := jsonx.Unmarshal(b, &m)
	if err != nil {
		var head struct {
			ID        jsonx.RawMessage `json:"id"`
			Timestamp jsonx.RawMessage `json:"timestamp"`
			Type      jsonx.RawMessage `json:"type"`
		}
		_ = jsonx.Unmarshal(b, &head)
		m = Message{ID: rawString(head.ID), Timestamp: rawString(head.Timestamp), Type: rawString(head.Type), Bad: err}
	}
	if m.ID == "" {
		sum := sha256.Sum256(b)
		m.ID = "message-" + hex.EncodeToString(sum[:8])
		if m.Bad == nil {
			m.Bad = errors.New("message without id")
		}
	}
	m.Raw = b
	return m
}

// rawString is the value of a JSON string, "" for anything else.
func rawString(b jsonx.RawMessage) string {
	var s string
	if len(b) == 0 || b[0] != '"' || jsonx.Unmarshal(b, &s) != nil {
		return ""
	}
	return s
}

// DecodeChatJSONL replays a .jsonl chat log (Gemini CLI v0.39+, written by
// its ChatRecordingService): the first line holds the metadata
// ({sessionId, projectHash, startTime, lastUpdated, kind, …}); each later
// line is a message record (a record whose id was seen before replaces
// it, in place), {"$set": {…}} merging metadata (a "messages" array in it is
// a checkpoint replacing every message), or {"$rewindTo": id} dropping that
// message and every later one (all of them when the id is unknown, as the
// CLI does). Blank lines are skipped. Lines that are not JSON or not one
// of these shapes are returned as DecodeErrors (the last line may be cut
// mid-write); the rest of the file is still replayed.
//
// The rules follow the CLI's source. The real chats of the corpus (v0.39)
// exercise the first line, messages re-appended with their id as they grow
// and $set lines; $rewindTo and a $set checkpoint appear in none of them.
func DecodeChatJSONL(data []byte) (Chat, []*DecodeError) {
	var c Chat
	var errs []*DecodeError
	var order []string
	byID := map[string]Message{}
	lineNo := int64(0)
	for len(data) > 0 {
		lineNo++
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var probe struct {
			ID       *string          `json:"id"`
			RewindTo *string          `json:"$rewindTo"`
			Set      jsonx.RawMessage `json:"$set"`
			Session  *string          `json:"sessionId"`
		}
		if err := jsonx.Unmarshal(line, &probe); err != nil {
			errs = append(errs, &DecodeError{Reason: decodeReason(line, err), Line: lineNo, Err: err})
			continue
		}
		switch {
		case probe.RewindTo != nil:
			idx := -1
			for i, id := range order {
				if id == *probe.RewindTo {
					idx = i
					break
				}
			}
			if idx < 0 {
				idx = 0
			}
			for _, id := range order[idx:] {
				delete(byID, id)
			}
			order = order[:idx]
		case probe.ID != nil:
			m := decodeMessage(append(jsonx.RawMessage(nil), line...))
			if _, seen := byID[m.ID]; !seen {
				order = append(order, m.ID)
			}
			byID[m.ID] = m
		case len(probe.Set) > 0 && probe.Set[0] == '{':
			var set struct {
				Chat
				Messages []jsonx.RawMessage `json:"messages"`
			}
			if err := jsonx.Unmarshal(probe.Set, &set); err != nil {
				errs = append(errs, &DecodeError{Reason: ReasonUnexpectedShape, Line: lineNo, Err: err})
				continue
			}
			mergeMeta(&c, probe.Set, set.Chat)
			if set.Messages != nil {
				order, byID = nil, map[string]Message{}
				for _, mb := range set.Messages {
					m := decodeMessage(mb)
					if _, seen := byID[m.ID]; !seen {
						order = append(order, m.ID)
					}
					byID[m.ID] = m
				}
			}
		case probe.Session != nil:
			var meta Chat
			if err := jsonx.Unmarshal(line, &meta); err != nil {
				errs = append(errs, &DecodeError{Reason: ReasonUnexpectedShape, Line: lineNo, Err: err})
				continue
			}
			mergeMeta(&c, line, meta)
		default:
			errs = append(errs, &DecodeError{Reason: ReasonUnexpectedShape, Line: lineNo, Err: errors.New("neither message, $set, $rewindTo nor metadata")})
		}
	}
	for _, id := range order {
		c.Messages = append(c.Messages, byID[id])
	}
	return c, errs
}

// mergeMeta copies the metadata fields present in raw from src into c.
func mergeMeta(c *Chat, raw []byte, src Chat) {
	var present map[string]jsonx.RawMessage
	_ = jsonx.Unmarshal(raw, &present)
	for k := range present {
		switch k {
		case "sessionId":
			c.SessionID = src.SessionID
		case "projectHash":
			c.ProjectHash = src.ProjectHash
		case "startTime":
			c.StartTime = src.StartTime
		case "lastUpdated":
			c.LastUpdated = src.LastUpdated
		case "kind":
			c.Kind = src.Kind
		case "summary":
			c.Summary = src.Summary
		case "directories":
			c.Directories = src.Directories
		}
	}
}

// Placement tells, from a chat file's path (slash or backslash separated),
// whether it is a nested chat and under which session:
// chats/<parentSessionId>/<name>.json(l) is a subagent chat of that
// session; chats/skill-extraction-<id>/<name>.json is a background
// skill-extraction chat, whose parent is taken to be <id> (not confirmed
// against the CLI's source). Top-level chats/<name> return "".
func Placement(filePath string) (parentSessionID string, skillExtraction bool) {
	p := strings.ReplaceAll(filePath, `\`, "/")
	dir := path.Dir(p)
	if path.Base(path.Dir(dir)) != "chats" {
		return "", false
	}
	name := path.Base(dir)
	if rest, ok := strings.CutPrefix(name, "skill-extraction-"); ok {
		return rest, true
	}
	return name, false
}
