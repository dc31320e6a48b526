// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package claudecode

import "github.com/agentotel/agentotel/internal/agentevent"

// asidePrefix starts the agent id of a /btw side question
// (<session>/subagents/agent-aside_question-<hex>.jsonl).
const asidePrefix = "aside_question-"

// A /btw side-question file opens with a copy of the parent conversation's
// rows (same uuid and message.id as in the parent file, re-tagged with the
// aside's agentId); only its last prompt and what follows it are the side
// question. Emitting every row would duplicate the parent's events and
// usage. The parser of such a file therefore holds its events: a prompt
// (user_message) drops what is held (rows before it were the parent's, or a
// side question superseded by it) and starts again; Flush, at the end of the
// file's data, releases the side question. Held events are kept in the parser
// state without their Raw record, so a restart loses none.

// release passes the events of one record on, or holds them for an aside
// file.
func (p *Parser) release(events []agentevent.Event) []agentevent.Event {
	if !p.aside {
		return events
	}
	p.hold(events)
	return nil
}

func (p *Parser) hold(events []agentevent.Event) {
	for i := range events {
		ev := events[i] // a copy: held without its raw record
		if ev.Type == agentevent.TypeUserMessage {
			clear(p.st.Aside)
			p.st.Aside = p.st.Aside[:0]
		}
		ev.Raw = nil
		p.st.Aside = append(p.st.Aside, ev)
	}
}
