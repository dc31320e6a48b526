// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/testhome"
	"github.com/agentotel/agentotel/tests/testenv"
)

// TestFleetMachinesThroughGateway runs the two-tier topology on loopback as the recipe shows it:
// two "developer machines" (two collectors with config/fleet-machine.yaml as written, each with
// its own HOME holding part of the Claude testdata, its own state and its own
// AGENTOTEL_INSTANCE_ID) send to one gateway (config/fleet-gateway.yaml as written), which
// forwards to a real Jaeger. Every turn arrives once, and each trace's resource says which
// machine it came from: service.instance.id is that machine's, host.name the host's name.
func TestFleetMachinesThroughGateway(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds the collector and Jaeger (skipped with -short)")
	}
	root := repoRoot(t)
	bin := collectorBinary(t)
	j := startJaeger(t)
	hostname, err := os.Hostname()
	require.NoError(t, err)

	gatewayPorts := testenv.FreePorts(t, 2)
	gatewayPort := gatewayPorts[0]
	gateway := start(t, "gateway", bin, []string{
		fmt.Sprintf("GATEWAY_LISTEN=127.0.0.1:%d", gatewayPort),
		fmt.Sprintf("GATEWAY_LISTEN_HTTP=127.0.0.1:%d", gatewayPorts[1]),
		"AGENTOTEL_STATE_DIR=" + filepath.Join(t.TempDir(), "gateway-state"),
		fmt.Sprintf("OTLP_ENDPOINT=127.0.0.1:%d", j.otlpGRPC),
	}, "--config", filepath.Join(root, "config", "fleet-gateway.yaml"))

	// The Claude testdata cases, dealt to two machines; turns per session and the machine
	// that holds each session come from the golden events.
	machines := []string{"alice@dev-a", "bob@dev-b"}
	homes := []string{t.TempDir(), t.TempDir()}
	owner := map[string]string{} // session id → machine
	wantTurns := map[string]int{}
	cases, err := filepath.Glob(filepath.Join(root, "testdata", "claude_code", "*", "events.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, cases)
	sort.Strings(cases)
	for i, golden := range cases {
		m := i % len(machines)
		dir := filepath.Dir(golden)
		copyTree(t, dir, filepath.Join(homes[m], ".claude", "projects", "-fleet-"+filepath.Base(dir)),
			func(p string) bool { return strings.HasSuffix(p, ".jsonl") })
		for session, n := range mainThreadTurns(t, golden) {
			owner[session] = machines[m]
			wantTurns[session] += n
		}
	}
	total := 0
	for _, n := range wantTurns {
		total += n
	}
	require.Positive(t, total)

	for m, id := range machines {
		start(t, "machine-"+id, bin, append(testhome.Env(homes[m]),
			"AGENTOTEL_STATE_DIR="+filepath.Join(t.TempDir(), "state"),
			"AGENTOTEL_INSTANCE_ID="+id,
			fmt.Sprintf("GATEWAY_ENDPOINT=127.0.0.1:%d", gatewayPort),
		), "--config", filepath.Join(root, "config", "fleet-machine.yaml"))
	}

	var traces []jTrace
	waitFor(t, 120*time.Second, fmt.Sprintf("%d claude-code turns from two machines in Jaeger", total), func() (bool, string) {
		if gateway.Exited() {
			return true, "gateway exited"
		}
		traces = j.traces(t, "claude-code")
		roots := 0
		for _, tr := range traces {
			for _, sp := range tr.Spans {
				if sp.parent() == "" && sp.OperationName == "invoke_agent claude-code" {
					roots++
				}
			}
		}
		return roots >= total, fmt.Sprintf("%d traces, %d turn roots", len(traces), roots)
	})
	require.False(t, gateway.Exited(), "the gateway stopped: %s", gateway.LogText())

	gotTurns := map[string]int{}
	perMachine := map[string]int{}
	priced := 0 // chat spans gen_ai_cost priced on the machines
	for _, tr := range traces {
		for _, sp := range tr.Spans {
			if strings.HasPrefix(sp.OperationName, "chat ") && sp.tagString("agent.usage.cost_source") == "table" {
				priced++
			}
			// agent_native on the gateway leaves the machines' finished turns as they are.
			assert.Empty(t, sp.tagString(agentevent.AttrOrigin), "span %s %s", sp.OperationName, sp.SpanID)
			if sp.parent() != "" || sp.OperationName != "invoke_agent claude-code" {
				continue
			}
			session := sp.tagString("gen_ai.conversation.id")
			gotTurns[session]++
			res := processTags(tr.Processes[sp.ProcessID])
			assert.Equal(t, owner[session], res["service.instance.id"], "session %s: the machine that read it", session)
			assert.Equal(t, hostname, res["host.name"], "session %s", session)
			perMachine[res["service.instance.id"]]++
		}
	}
	assert.Equal(t, wantTurns, gotTurns, "every turn once, through the gateway")
	assert.Positive(t, priced, "chat spans priced by gen_ai_cost on the machines")
	for _, id := range machines {
		assert.Positive(t, perMachine[id], "turns from %s", id)
	}
}

// mainThreadTurns counts the prompts of each session's main thread in a golden events file.
func mainThreadTurns(t *testing.T, path string) map[string]int {
	t.Helper()
	logs, err := golden.ReadLogs(path)
	require.NoError(t, err)
	evs, _ := agentevent.DecodeLogs(logs)
	out := map[string]int{}
	for i := range evs {
		if ev := &evs[i]; ev.Type == agentevent.TypeUserMessage && ev.AgentID == "" {
			out[ev.SessionID]++
		}
	}
	return out
}

func processTags(p jProcess) map[string]string {
	out := map[string]string{}
	for _, tg := range p.Tags {
		out[tg.Key] = fmt.Sprint(tg.Value)
	}
	return out
}
