// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package amp

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/agents"
)

// Source is Amp's event source.
const Source agentevent.Source = "amp"

func init() {
	agents.Register(agents.Descriptor{
		Source:  Source,
		Service: "amp",
		Display: "Amp",
		Color:   "red",
		Folders: []agents.Folder{{Env: "AMP_DATA_DIR", Home: []string{".local", "share", "amp"}}},
		// One JSON file per thread, rewritten as the thread grows.
		Include:  func(dir string) []string { return []string{filepath.Join(dir, "threads", "T-*.json")} },
		Optional: true,
		Reader: agents.Reader{
			Kind:        agents.RewrittenFiles,
			NewSnapshot: func() agents.SnapshotMapper { return threadMapper{} },
		},
		Ccusage: &agents.Ccusage{Command: "amp"},
		Fixtures: agents.Fixtures{
			Dir: "amp",
			Stage: func(s *agents.Staging) error {
				for _, p := range s.Glob("threads/*.json") {
					if err := s.Copy(p, filepath.Join(".local", "share", "amp", "threads", filepath.Base(p))); err != nil {
						return err
					}
				}
				return nil
			},
			Keep: func(rel string) bool { return strings.HasPrefix(rel, "threads/T-") && strings.HasSuffix(rel, ".json") },
			Place: func(_ int, rel string, _ []byte) string {
				return filepath.Join(".local", "share", "amp", rel)
			},
			Share: 0.05,
		},
		Doc: agents.Doc{Versions: "client 0.0.17x (threads JSON)"},
	})
}

// threadMapper maps Amp thread files; the thread id keys the watermark.
type threadMapper struct{}

func (threadMapper) Sort(paths []string) { slices.Sort(paths) }

func (threadMapper) NewWatermark() agents.Watermark { return Watermark{} }

func (threadMapper) UnmarshalWatermark(b []byte) (agents.Watermark, error) {
	return UnmarshalState(b)
}

func (threadMapper) Read(ctx context.Context, r *agents.SnapshotRead) (string, error) {
	th, err := DecodeThread(r.Data)
	if err != nil {
		if de, ok := errors.AsType[*DecodeError](err); ok {
			return de.Reason, err
		}
		return ReasonMalformedJSON, err
	}
	r.Records(ctx, len(th.Messages))
	r.Deliver(ctx, th.ID, func(t *agents.SnapshotThread) agents.SnapshotResult {
		res := MapThread(Context{LogFile: r.Path, Sequence: t.Seq}, th, t.Emitted.(Watermark), r.Settled)
		return agents.SnapshotResult{Events: res.Events, Emitted: res.Emitted, CaughtUp: res.Held < 0}
	})
	return "", nil
}
