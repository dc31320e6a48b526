// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/copilotcli"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/jsonl"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/snapshot"
)

// copilotAgent: GitHub Copilot CLI keeps its sessions in its home
// directory: appended session-state/<id>/events.jsonl (1.0.x;
// workspace.yaml beside it), flat session-state/<id>.jsonl (0.0.3xx), and
// history-session-state/*.json (0.0.x, one JSON object rewritten as the
// session goes): the first two are tailed, the last read as snapshots
// (sourceJSONLAndSnapshot).
var copilotAgent = agent{
	key:            "copilot_cli",
	source:         agentevent.SourceCopilotCLI,
	config:         func(c *Config) *AgentConfig { return &c.CopilotCLI },
	defaultInclude: copilotInclude,
	kind:           sourceJSONLAndSnapshot,
	newParser:      newCopilotParser,
	newSnapshot:    func() snapshot.Mapper { return copilotHistoryMapper{} },
	optional:       true,
}

// copilotInclude: the CLI's home is $COPILOT_HOME when set (its documented
// relocation of ~/.copilot), else ~/.copilot.
func copilotInclude(env environment) ([]string, error) {
	dir, err := homeOr(env, "COPILOT_HOME", ".copilot")
	if err != nil {
		return nil, err
	}
	return copilotPatterns(filepath.Clean(dir)), nil
}

// copilotPatterns are the session files below a Copilot CLI home.
func copilotPatterns(dir string) []string {
	return []string{
		filepath.Join(dir, "session-state", "*", "events.jsonl"),
		filepath.Join(dir, "session-state", "*.jsonl"),
		filepath.Join(dir, "history-session-state", "*.json"),
	}
}

// newCopilotParser makes the parser of one JSONL session file, given the
// workspace.yaml beside an events.jsonl when there is one (it names the
// project where session.start does not).
func newCopilotParser(path string, o jsonl.ParseOptions) jsonl.Parser {
	p := copilotcli.NewParserWithOptions(path, copilotcli.Options{OmitContent: o.OmitContent, OmitRaw: o.OmitRaw})
	if filepath.Base(path) == "events.jsonl" {
		if b, err := os.ReadFile(filepath.Join(filepath.Dir(path), "workspace.yaml")); err == nil {
			p.SetWorkspace(copilotcli.ParseWorkspace(b))
		}
	}
	return p
}

// copilotHistoryMapper maps history-session-state files.
type copilotHistoryMapper struct{}

func (copilotHistoryMapper) Sort(paths []string) { slices.Sort(paths) }

func (copilotHistoryMapper) NewWatermark() snapshot.Watermark { return copilotcli.Watermark{} }

func (copilotHistoryMapper) UnmarshalWatermark(b []byte) (snapshot.Watermark, error) {
	return copilotcli.UnmarshalWatermark(b)
}

func (copilotHistoryMapper) Read(ctx context.Context, r *snapshot.Read) (string, error) {
	h, err := copilotcli.DecodeHistory(r.Data)
	if err != nil {
		if de, ok := errors.AsType[*copilotcli.DecodeError](err); ok {
			return de.Reason, err
		}
		return copilotcli.ReasonMalformedJSON, err
	}
	r.Records(ctx, len(h.Timeline))
	r.Deliver(ctx, h.SessionID, func(th *snapshot.Thread) snapshot.Result {
		res := copilotcli.MapHistory(copilotcli.HistoryContext{LogFile: r.Path, Sequence: th.Seq}, h, th.Emitted.(copilotcli.Watermark))
		return snapshot.Result{Events: res.Events, Emitted: res.Emitted, CaughtUp: true}
	})
	return "", nil
}
