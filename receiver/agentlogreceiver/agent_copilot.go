// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver // import "github.com/agentotel/agentotel/receiver/agentlogreceiver"

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"

	"github.com/agentotel/agentotel/internal/vendors/copilotcli"
)

// GitHub Copilot CLI keeps its sessions in its home directory: appended
// session-state/<id>/events.jsonl (1.0.x; workspace.yaml beside it), flat
// session-state/<id>.jsonl (0.0.3xx), and history-session-state/*.json
// (0.0.x, one JSON object rewritten as the session goes): the first two
// are tailed, the last read as snapshots (sourceJSONLAndSnapshot).

// copilotInclude: the CLI's home is $COPILOT_HOME when set (its documented
// relocation of ~/.copilot), else ~/.copilot.
func copilotInclude(env environment) ([]string, error) {
	dir := ""
	switch d := env.getenv("COPILOT_HOME"); {
	case d != "":
		dir = expandHome(d, env.home)
	case env.home != "":
		dir = filepath.Join(env.home, ".copilot")
	default:
		return nil, errNoHome
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
func newCopilotParser(path string, o parseOptions) parser {
	p := copilotcli.NewParserWithOptions(path, copilotcli.Options{OmitContent: o.omitContent, OmitRaw: o.omitRaw})
	if filepath.Base(path) == "events.jsonl" {
		if b, err := os.ReadFile(filepath.Join(filepath.Dir(path), "workspace.yaml")); err == nil {
			p.SetWorkspace(copilotcli.ParseWorkspace(b))
		}
	}
	return p
}

// copilotHistoryMapper maps history-session-state files.
type copilotHistoryMapper struct{}

func newCopilotHistoryMapper() snapshotMapper { return copilotHistoryMapper{} }

func (copilotHistoryMapper) sort(paths []string) { slices.Sort(paths) }

func (copilotHistoryMapper) newWatermark() watermark { return copilotcli.Watermark{} }

func (copilotHistoryMapper) unmarshalWatermark(b []byte) (watermark, error) {
	return copilotcli.UnmarshalWatermark(b)
}

func (copilotHistoryMapper) read(ctx context.Context, r *snapshotRead) (string, error) {
	h, err := copilotcli.DecodeHistory(r.data)
	if err != nil {
		var de *copilotcli.DecodeError
		if errors.As(err, &de) {
			return de.Reason, err
		}
		return copilotcli.ReasonMalformedJSON, err
	}
	if n := len(h.Timeline) - r.file.records; n > 0 {
		r.src.emitter.read(ctx, int64(n))
	}
	r.file.records = len(h.Timeline)
	r.deliver(ctx, h.SessionID, func(th *snapshotThread) threadResult {
		res := copilotcli.MapHistory(copilotcli.HistoryContext{LogFile: r.path, Sequence: th.seq}, h, th.emitted.(copilotcli.Watermark))
		return threadResult{events: res.Events, emitted: res.Emitted, caughtUp: true}
	})
	return "", nil
}
