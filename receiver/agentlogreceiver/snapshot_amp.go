// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver // import "github.com/agentotel/agentotel/receiver/agentlogreceiver"

import (
	"context"
	"errors"
	"path/filepath"
	"slices"

	"github.com/agentotel/agentotel/internal/vendors/amp"
)

// Amp keeps one JSON file per thread and rewrites it as the thread grows:
// a snapshot source (source_snapshot.go). This file is the Amp-specific
// part.

// ampInclude: Amp's data directory is $AMP_DATA_DIR when set, else
// ~/.local/share/amp; threads are threads/T-<uuid>.json below it.
func ampInclude(env environment) ([]string, error) {
	dir := ""
	switch d := env.getenv("AMP_DATA_DIR"); {
	case d != "":
		dir = expandHome(d, env.home)
	case env.home != "":
		dir = filepath.Join(env.home, ".local", "share", "amp")
	default:
		return nil, errNoHome
	}
	return []string{ampPattern(filepath.Clean(dir))}, nil
}

// ampPattern is the thread files below an Amp data directory.
func ampPattern(dir string) string { return filepath.Join(dir, "threads", "T-*.json") }

// ampMapper maps Amp thread files; the thread id keys the watermark.
type ampMapper struct{}

func newAmpMapper() snapshotMapper { return ampMapper{} }

func (ampMapper) sort(paths []string) { slices.Sort(paths) }

func (ampMapper) newWatermark() watermark { return amp.Watermark{} }

func (ampMapper) unmarshalWatermark(b []byte) (watermark, error) { return amp.UnmarshalState(b) }

func (ampMapper) read(ctx context.Context, r *snapshotRead) (string, error) {
	th, err := amp.DecodeThread(r.data)
	if err != nil {
		var de *amp.DecodeError
		if errors.As(err, &de) {
			return de.Reason, err
		}
		return amp.ReasonMalformedJSON, err
	}
	if n := len(th.Messages) - r.file.records; n > 0 {
		r.src.emitter.read(ctx, int64(n))
	}
	r.file.records = len(th.Messages)
	r.deliver(ctx, th.ID, func(t *snapshotThread) threadResult {
		res := amp.MapThread(amp.Context{LogFile: r.path, Sequence: t.seq}, th, t.emitted.(amp.Watermark), r.settled)
		return threadResult{events: res.Events, emitted: res.Emitted, caughtUp: res.Held < 0}
	})
	return "", nil
}
