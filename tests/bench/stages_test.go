// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// Where the CPU of a run goes: the collector's CPU profile of the run, each sample counted in the
// first stage its stack (leaf to root) falls in. The stages are the steps a record takes, from the
// file to the connector's stored state; what falls in none is "other" (the collector's own work,
// the scheduler, the scrapes of its metrics).
type stage struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"cpu_s"`
	Share   float64 `json:"share"`
}

// stageRules name the stages by a part of the function names on a sample's stack, looked up from
// the leaf up: the first frame that matches a rule decides. The storage writes come first so that
// the connector's and the receiver's writes count as storage, and the garbage collector's work
// done in an allocating goroutine (assists) counts where it was done.
var stageRules = []struct{ name, match string }{
	{"storage writes (bbolt, s2)", "go.etcd.io/bbolt."},
	{"storage writes (bbolt, s2)", "github.com/klauspost/compress/s2."},
	{"storage writes (bbolt, s2)", "agentotel/internal/storagecodec."},
	{"read files into lines", "agentlogreceiver/internal/tailer.(*lineBatcher)"},
	{"decode and map records (parsers)", "agentotel/internal/vendors/"},
	{"decode and map records (parsers)", "agentlogreceiver.(*geminiMapper)"},
	{"decode and map records (parsers)", "agentlogreceiver/internal/snapshot."},
	{"decode and map records (parsers)", "agentlogreceiver/internal/opencode."},
	{"events to log records (pdata)", "agentotel/internal/agentevent.EncodeLogs"},
	{"events to log records (pdata)", "agentlogreceiver.(*emitter)"},
	{"connector: turns to spans", "agentotel/connector/agentspanconnector"},
	{"garbage collector (background)", "runtime.gcBgMarkWorker"},
	{"polls, reads and deliveries (tailer, JSONL source)", "agentlogreceiver/internal/jsonl."},
	{"polls, reads and deliveries (tailer, JSONL source)", "agentlogreceiver/internal/tailer."},
	{"polls, reads and deliveries (tailer, JSONL source)", "agentlogreceiver/internal/finder."},
}

// cpuStages reads the CPU profile at path and sums its samples by stage, in the order of
// stageRules, then "other".
func cpuStages(path string) ([]stage, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return nil, err
	}
	cpu := -1
	for i, st := range p.SampleType {
		if st.Type == "cpu" {
			cpu = i
		}
	}
	if cpu < 0 {
		return nil, fmt.Errorf("%s: no cpu samples", path)
	}
	byName := map[string]float64{}
	var total float64
	for _, s := range p.Sample {
		secs := float64(s.Value[cpu]) / 1e9
		total += secs
		byName[stageOf(s)] += secs
	}
	var out []stage
	seen := map[string]bool{}
	for _, r := range append(stageRules, struct{ name, match string }{"other", ""}) {
		if seen[r.name] {
			continue
		}
		seen[r.name] = true
		if secs := byName[r.name]; secs > 0 && total > 0 {
			out = append(out, stage{Name: r.name, Seconds: secs, Share: secs / total})
		}
	}
	return out, nil
}

func stageOf(s *profile.Sample) string {
	for _, loc := range s.Location {
		for _, line := range loc.Line {
			if line.Function == nil {
				continue
			}
			for _, r := range stageRules {
				if strings.Contains(line.Function.Name, r.match) {
					return r.name
				}
			}
		}
	}
	return "other"
}

// writeStages is the table of a run's stages.
func writeStages(w io.Writer, stages []stage) {
	fmt.Fprintln(w, "| stage | CPU | share |")
	fmt.Fprintln(w, "|---|---|---|")
	for _, s := range stages {
		fmt.Fprintf(w, "| %s | %.1f s | %.0f %% |\n", s.Name, s.Seconds, 100*s.Share)
	}
}

// TestStagesOfAProfile: a profile written by the Go runtime is read and split; every second of it
// lands in one stage.
func TestStagesOfAProfile(t *testing.T) {
	stages, err := cpuStages("testdata/cpu.pprof")
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, s := range stages {
		sum += s.Share
	}
	if len(stages) < 3 || sum < 0.999 || sum > 1.001 {
		t.Fatalf("stages %v sum to %v", stages, sum)
	}
}
