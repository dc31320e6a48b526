// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver // import "github.com/agentotel/agentotel/receiver/agentlogreceiver"

import (
	"github.com/agentotel/agentotel/internal/vendors/claudecode"
	"github.com/agentotel/agentotel/internal/vendors/codex"
	"github.com/agentotel/agentotel/internal/vendors/pi"
)

// parseOptions tell a JSONL parser what the emitter drops from every event,
// so that the parser need not build it (see emitter.prepare): content
// without include_content, the raw record without include_raw. A parser
// given them yields the events it would otherwise, less what is dropped.
type parseOptions struct {
	omitContent, omitRaw bool
}

func parseOptionsFor(cfg *Config) parseOptions {
	return parseOptions{omitContent: !cfg.IncludeContent, omitRaw: !cfg.IncludeRaw}
}

func newClaudeCodeParser(path string, o parseOptions) parser {
	return claudecode.NewParserWithOptions(path, claudecode.Options{OmitContent: o.omitContent, OmitRaw: o.omitRaw})
}

func newCodexParser(path string, o parseOptions) parser {
	return codex.NewParserWithOptions(path, codex.Options{OmitContent: o.omitContent, OmitRaw: o.omitRaw})
}

func newPiParser(path string, o parseOptions) parser {
	return pi.NewParserWithOptions(path, pi.Options{OmitContent: o.omitContent, OmitRaw: o.omitRaw})
}
