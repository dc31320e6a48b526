// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"context"
	"errors"
	"path/filepath"
	"slices"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/amp"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/snapshot"
)

// ampAgent: Amp keeps one JSON file per thread and rewrites it as the
// thread grows: a snapshot source (internal/snapshot).
var ampAgent = agent{
	key:            "amp",
	source:         agentevent.SourceAmp,
	config:         func(c *Config) *AgentConfig { return &c.Amp },
	defaultInclude: ampInclude,
	kind:           sourceSnapshot,
	newSnapshot:    func() snapshot.Mapper { return ampMapper{} },
	optional:       true,
}

// ampInclude: Amp's data directory is $AMP_DATA_DIR when set, else
// ~/.local/share/amp; threads are threads/T-<uuid>.json below it.
func ampInclude(env environment) ([]string, error) {
	dir, err := homeOr(env, "AMP_DATA_DIR", ".local", "share", "amp")
	if err != nil {
		return nil, err
	}
	return []string{ampPattern(filepath.Clean(dir))}, nil
}

// ampPattern is the thread files below an Amp data directory.
func ampPattern(dir string) string { return filepath.Join(dir, "threads", "T-*.json") }

// ampMapper maps Amp thread files; the thread id keys the watermark.
type ampMapper struct{}

func (ampMapper) Sort(paths []string) { slices.Sort(paths) }

func (ampMapper) NewWatermark() snapshot.Watermark { return amp.Watermark{} }

func (ampMapper) UnmarshalWatermark(b []byte) (snapshot.Watermark, error) {
	return amp.UnmarshalState(b)
}

func (ampMapper) Read(ctx context.Context, r *snapshot.Read) (string, error) {
	th, err := amp.DecodeThread(r.Data)
	if err != nil {
		if de, ok := errors.AsType[*amp.DecodeError](err); ok {
			return de.Reason, err
		}
		return amp.ReasonMalformedJSON, err
	}
	r.Records(ctx, len(th.Messages))
	r.Deliver(ctx, th.ID, func(t *snapshot.Thread) snapshot.Result {
		res := amp.MapThread(amp.Context{LogFile: r.Path, Sequence: t.Seq}, th, t.Emitted.(amp.Watermark), r.Settled)
		return snapshot.Result{Events: res.Events, Emitted: res.Emitted, CaughtUp: res.Held < 0}
	})
	return "", nil
}
