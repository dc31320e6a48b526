// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver // import "github.com/agentotel/agentotel/receiver/agentlogreceiver"

import "github.com/agentotel/agentotel/internal/agentevent"

// newClaudeCodeParser stands in for internal/vendor/claudecode until that
// package lands: every record is reported as unparsed (reason
// parser_unavailable), so nothing is silently dropped.
func newClaudeCodeParser(path string) parser { return &pendingParser{path: path} }

type pendingParser struct {
	path string
	last int64
}

func (p *pendingParser) Parse(line []byte, lineNo, offset int64) []agentevent.Event {
	if offset < p.last {
		return nil
	}
	p.last = offset + 1
	return []agentevent.Event{{
		Source: agentevent.SourceClaudeCode, Type: agentevent.TypeLog, Role: agentevent.RoleSystem,
		LogFile: p.path, LogLine: lineNo, Raw: line, Unparsed: "parser_unavailable",
	}}
}

func (*pendingParser) MarshalState() ([]byte, error) { return nil, nil }
func (*pendingParser) UnmarshalState([]byte) error   { return nil }
