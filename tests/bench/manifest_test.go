// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

var gomodRe = regexp.MustCompile(`(?m)^\s*-\s*gomod:\s*(\S+ \S+)\s*\n(?:\s*import:\s*(\S+))?`)

// TestBenchManifestHoldsTheDistribution keeps the bench build honest: every component of
// builder-config.yaml, at the same version, is in tests/bench/builder-filelog.yaml.
func TestBenchManifestHoldsTheDistribution(t *testing.T) {
	root := repoRoot(t)
	dist, err := os.ReadFile(filepath.Join(root, "builder-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	bench, err := os.ReadFile(filepath.Join(root, "tests", "bench", "builder-filelog.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, m := range gomodRe.FindAllSubmatch(bench, -1) {
		have[string(m[1])+" "+string(m[2])] = true
	}
	n := 0
	for _, m := range gomodRe.FindAllSubmatch(dist, -1) {
		n++
		if k := string(m[1]) + " " + string(m[2]); !have[k] {
			t.Errorf("builder-config.yaml has %q, tests/bench/builder-filelog.yaml does not", k)
		}
	}
	if n == 0 {
		t.Fatal("no component found in builder-config.yaml")
	}
	for _, want := range []string{
		"github.com/open-telemetry/opentelemetry-collector-contrib/receiver/filelogreceiver v0.159.0 ",
		"go.opentelemetry.io/collector/exporter/nopexporter v0.159.0 ",
	} {
		if !have[want] {
			t.Errorf("tests/bench/builder-filelog.yaml lacks %s", want)
		}
	}
}
