// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"encoding/json"
	"fmt"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// fakeParser understands just enough of Claude Code rows (user with string
// content, assistant with text blocks) to develop the receiver before
// internal/vendor/claudecode exists.
type fakeParser struct {
	path string
	st   fakeState
}

type fakeState struct {
	Last   int64  `json:"last"` // offset of the last record parsed, -1 before any
	Seq    int64  `json:"seq"`
	Prompt string `json:"prompt"`
}

func newFakeParser(path string) parser { return &fakeParser{path: path, st: fakeState{Last: -1}} }

func (p *fakeParser) Parse(line []byte, lineNo, offset int64) []agentevent.Event {
	if offset <= p.st.Last {
		return nil
	}
	p.st.Last = offset
	var row struct {
		Type      string `json:"type"`
		UUID      string `json:"uuid"`
		SessionID string `json:"sessionId"`
		Version   string `json:"version"`
		Message   struct {
			Content json.RawMessage `json:"content"`
		} `json:"message"`
	}
	base := agentevent.Event{
		Source: agentevent.SourceClaudeCode, LogFile: p.path, LogLine: lineNo, Raw: line,
	}
	bad := func(reason string) []agentevent.Event {
		ev := base
		ev.Type, ev.Role, ev.Unparsed = agentevent.TypeLog, agentevent.RoleSystem, reason
		ev.EventID = agentevent.StableID(p.path, offset, 0)
		return []agentevent.Event{ev}
	}
	if err := json.Unmarshal(line, &row); err != nil {
		return bad("malformed_json")
	}
	base.SessionID, base.AgentVersion = row.SessionID, row.Version
	p.st.Seq++
	base.Sequence = p.st.Seq
	switch row.Type {
	case "user":
		var text string
		if err := json.Unmarshal(row.Message.Content, &text); err != nil {
			return bad("unexpected_shape")
		}
		ev := base
		ev.Type, ev.EventID, ev.Text = agentevent.TypeUserMessage, row.UUID, text
		p.st.Prompt = row.UUID
		agentevent.Normalize(&ev)
		return []agentevent.Event{ev}
	case "assistant":
		var blocks []struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(row.Message.Content, &blocks); err != nil {
			return bad("unexpected_shape")
		}
		var out []agentevent.Event
		for i, b := range blocks {
			ev := base
			ev.Type, ev.Text, ev.ParentEventID = agentevent.TypeAssistantMessage, b.Text, p.st.Prompt
			ev.EventID = row.UUID
			if i > 0 {
				ev.EventID = fmt.Sprintf("%s#%d", row.UUID, i)
			}
			agentevent.Normalize(&ev)
			out = append(out, ev)
		}
		return out
	}
	return bad("unknown_type")
}

func (p *fakeParser) MarshalState() ([]byte, error) { return json.Marshal(p.st) }

func (p *fakeParser) UnmarshalState(b []byte) error { return json.Unmarshal(b, &p.st) }
