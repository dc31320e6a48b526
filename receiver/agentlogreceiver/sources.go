// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"fmt"
	"strings"

	"github.com/agentotel/agentotel/internal/agents"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/checkpoint"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/jsonl"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/opencode"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/progress"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/snapshot"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/source"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/tailer"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/watch"
)

// buildSource makes the source of one agent, of the kind of its data, on
// set; scope gives another part of the storage (the snapshot files of an
// agent that has both kinds), readSlots bound the JSONL batches read at
// once across agents.
func buildSource(a agent, cfg *Config, set source.Settings, readSlots chan struct{}, scope func(key string) *checkpoint.Store) (source.Source, error) {
	switch a.Reader.Kind {
	case agents.AppendedJSONL:
		return newJSONLSource(a, cfg, set, readSlots)
	case agents.RewrittenFiles:
		return snapshot.New(set, a.Reader.NewSnapshot())
	case agents.OpenCodeStore:
		return opencode.New(set, opencode.Store{Source: a.Source, Database: a.Reader.Database})
	case agents.AppendedAndRewritten:
		jsonlPatterns, snapshots := splitJSONL(set.Include)
		var all source.Group
		if len(jsonlPatterns) > 0 {
			js := set
			js.Include = jsonlPatterns
			src, err := newJSONLSource(a, cfg, js, readSlots)
			if err != nil {
				return nil, err
			}
			all = append(all, src)
		}
		if len(snapshots) > 0 {
			ss := set
			ss.Include = snapshots
			ss.Checkpoints = scope(a.key + ".snapshot")
			src, err := snapshot.New(ss, a.Reader.NewSnapshot())
			if err != nil {
				return nil, err
			}
			all = append(all, src)
		}
		return all, nil
	}
	return nil, fmt.Errorf("agent %s: unknown reader kind %s", a.key, a.Reader.Kind)
}

// newJSONLSource is the source of an agent's JSONL files, each read by the
// agent's parser, told what the emitter drops.
func newJSONLSource(a agent, cfg *Config, set source.Settings, readSlots chan struct{}) (*jsonl.Source, error) {
	opts := parseOptionsFor(cfg)
	tc := tailerConfig(cfg, nil)
	tc.Slots = readSlots
	if set.Watch != nil {
		tc.Watch = &watch.Config{
			Include: set.Include, Exclude: set.Exclude, ExcludeOlderThan: set.ExcludeOlderThan,
			Group: set.Watch,
		}
	}
	return jsonl.New(set, jsonl.Config{
		NewParser: func(path string) jsonl.Parser { return a.newParser(path, opts) },
		Tail:      tc,
	})
}

// newParser makes the agent's parser of one JSONL file, given the file the
// agent writes beside it when its reader names one.
func (a agent) newParser(path string, o agents.ParseOptions) agents.LineParser {
	return a.Reader.NewParser(path, a.Reader.FileOptions(path, o))
}

// parseOptionsFor tells a JSONL parser what the emitter drops from every
// event (see emitter.prepare), so that the parser need not build it.
func parseOptionsFor(cfg *Config) jsonl.ParseOptions {
	return jsonl.ParseOptions{OmitContent: !cfg.IncludeContent, OmitRaw: !cfg.IncludeRaw}
}

// tailerConfig is the tailer of one agent's JSONL files with the receiver's
// settings, matching files with match; Emit, Store, Logger and Slots are
// the source's to set.
func tailerConfig(cfg *Config, match func() ([]string, error)) tailer.Config {
	return tailer.Config{
		Match:      match,
		Poll:       cfg.PollInterval,
		Workers:    max(1, cfg.MaxConcurrentFiles/2),
		MaxLogSize: int(cfg.MaxLogSize),
		HeadBytes:  int64(cfg.FingerprintSize),
		StartAtEnd: cfg.StartAt == StartAtEnd,
	}
}

// splitJSONL separates the patterns of JSONL files (tailed) from the others
// (read as snapshots).
func splitJSONL(patterns []string) (tailed, other []string) {
	for _, p := range patterns {
		if strings.HasSuffix(p, ".jsonl") {
			tailed = append(tailed, p)
		} else {
			other = append(other, p)
		}
	}
	return tailed, other
}

// historyOf is what an agent has to read at start: the files its patterns
// match now, or, for OpenCode's data directories, what they hold.
func historyOf(kind agents.ReaderKind, include, exclude []string) progress.History {
	if kind == agents.OpenCodeStore {
		return progress.TreeHistory(include)
	}
	return progress.FileHistory(include, exclude)
}
