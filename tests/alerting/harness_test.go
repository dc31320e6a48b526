// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package alerting tests the alerting recipe: the Prometheus rules of config/alerts.yaml with
// promtool (`promtool check rules`, `promtool test rules`), the ocb-built collector running
// config/alerting.yaml as written, scraped through its prometheus exporter, and the Grafana
// dashboard's queries run against a real Prometheus.
package alerting

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/tests/testenv"
)

// The shared harness, under the names the tests here use.
var (
	repoRoot        = testenv.RepoRoot
	collectorBinary = testenv.CollectorBinary
	freePort        = testenv.FreePort
	start           = testenv.Start
	copyTree        = testenv.CopyTree
	waitFor         = testenv.WaitFor
)

type process = testenv.Process

// promtoolBinary is $AGENTOTEL_PROMTOOL, else what scripts/ensure-promtool.sh prints (it
// installs Debian's prometheus package when promtool is missing). Failing to get one fails the
// test: the rules are part of the recipe.
func promtoolBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("AGENTOTEL_PROMTOOL"); bin != "" {
		return bin
	}
	cmd := exec.Command("scripts/ensure-promtool.sh")
	cmd.Dir = repoRoot(t)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	require.NoError(t, err, "scripts/ensure-promtool.sh could not provide promtool")
	bin := strings.TrimSpace(string(out))
	require.NotEmpty(t, bin, "scripts/ensure-promtool.sh printed no path")
	return bin
}

// sample is one line of the Prometheus text exposition format.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// scrape reads url in the Prometheus text format (the prometheus exporter's default).
func scrape(url string) ([]sample, error) {
	resp, err := http.Get(url) //nolint:gosec // G107: the collector's metrics endpoint this test started
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	var out []sample
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s, err := parseSample(line)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

// parseSample parses `name{label="value",...} value [timestamp]`; label values may hold the
// escapes \\, \" and \n.
func parseSample(line string) (sample, error) {
	s := sample{labels: map[string]string{}}
	i := strings.IndexAny(line, "{ ")
	if i < 0 {
		return s, fmt.Errorf("no value: %q", line)
	}
	s.name = line[:i]
	rest := line[i:]
	if rest[0] == '{' {
		rest = rest[1:]
		for {
			rest = strings.TrimLeft(rest, ", ")
			if strings.HasPrefix(rest, "}") {
				rest = rest[1:]
				break
			}
			eq := strings.Index(rest, `="`)
			if eq < 0 {
				return s, fmt.Errorf("bad labels: %q", line)
			}
			key := rest[:eq]
			rest = rest[eq+2:]
			var val strings.Builder
			closed := false
			for j := 0; j < len(rest); j++ {
				c := rest[j]
				if c == '\\' && j+1 < len(rest) {
					j++
					switch rest[j] {
					case 'n':
						val.WriteByte('\n')
					default:
						val.WriteByte(rest[j])
					}
					continue
				}
				if c == '"' {
					rest = rest[j+1:]
					closed = true
					break
				}
				val.WriteByte(c)
			}
			if !closed {
				return s, fmt.Errorf("unterminated label value: %q", line)
			}
			s.labels[key] = val.String()
		}
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return s, fmt.Errorf("no value: %q", line)
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return s, fmt.Errorf("bad value in %q: %w", line, err)
	}
	s.value = v
	return s, nil
}
