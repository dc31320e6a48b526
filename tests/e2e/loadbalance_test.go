// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/tests/testenv"
)

// TestLoadBalancedGateways runs the gateway that scales out, on loopback, as the team-gateway
// recipe shows it: one front (config/fleet-front.yaml as written: the OTLP receiver and the
// load_balancing exporter routing by the session keys to a static list) before two gateways
// (config/fleet-gateway.yaml, idle bound cut short, each with its own state and
// AGENTOTEL_INSTANCE_ID), which build the turns and send them to a real Jaeger. Many Claude Code
// sessions, several turns each, are sent to the front interleaved — every export holds one record
// of each session, so the front must split each export by session. In Jaeger every turn is whole
// on exactly one gateway (one trace, one root, its two model calls and its tool call, the tokens
// of its records), none is split or repeated, every session's turns come from one gateway, and
// both gateways built some.
func TestLoadBalancedGateways(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds the collector and Jaeger (skipped with -short)")
	}
	const (
		sessions = 16
		turns    = 3
		model    = claudeModel
	)
	root := repoRoot(t)
	bin := collectorBinary(t)
	j := startJaeger(t)

	gatewayConfig := nativeConfig(t, "fleet-gateway.yaml", 2*time.Second)
	instances := []string{"gw-a", "gw-b"}
	var backends []string
	var gateways []*testenv.Process
	for _, id := range instances {
		ports := testenv.FreePorts(t, 2)
		g := start(t, id, bin, []string{
			fmt.Sprintf("GATEWAY_LISTEN=127.0.0.1:%d", ports[0]),
			fmt.Sprintf("GATEWAY_LISTEN_HTTP=127.0.0.1:%d", ports[1]),
			"AGENTOTEL_STATE_DIR=" + filepath.Join(t.TempDir(), "state"),
			"AGENTOTEL_INSTANCE_ID=" + id,
			fmt.Sprintf("OTLP_ENDPOINT=127.0.0.1:%d", j.otlpGRPC),
		}, "--config", gatewayConfig)
		waitListening(t, g, ports[0])
		backends = append(backends, fmt.Sprintf("127.0.0.1:%d", ports[0]))
		gateways = append(gateways, g)
	}
	frontPorts := testenv.FreePorts(t, 2)
	front := start(t, "front", bin, []string{
		fmt.Sprintf("GATEWAY_LISTEN=127.0.0.1:%d", frontPorts[0]),
		fmt.Sprintf("GATEWAY_LISTEN_HTTP=127.0.0.1:%d", frontPorts[1]),
		"GATEWAY_A=" + backends[0],
		"GATEWAY_B=" + backends[1],
	}, "--config", filepath.Join(root, "config", "fleet-front.yaml"))
	waitListening(t, front, frontPorts[1])

	// Each turn: prompt, a model call asking for a tool, the tool's result, the answer. Its tool
	// call id names it; its output tokens are its own.
	type turnKey struct{ session, callID string }
	want := map[turnKey]tokenSum{}
	steps := make([][]claudeRecord, turns*4)
	base := time.Now().Add(-30 * time.Minute).Truncate(time.Millisecond)
	for si := range sessions {
		s := newClaudeSessionOTLP(testUUID(0x1b, si), base.Add(time.Duration(si)*time.Millisecond))
		for k := range turns {
			prompt := testUUID(0x1b00+si, k)
			callID := fmt.Sprintf("toolu_e2eLB%02dturn%02d0000000", si, k)
			out1, out2 := int64(100+si*10+k), int64(1000+si*10+k)
			recs := []claudeRecord{
				s.userPrompt(prompt, 40+k),
				s.apiRequest(prompt, 2, out1, 10000, 500, 0.01),
				s.toolResult(prompt, "Bash", callID, k%2 == 0, 300+k),
				s.apiRequest(prompt, 7, out2, 10500, 20, 0.02),
			}
			want[turnKey{s.id, callID}] = tokenSum{In: 2 + 10000 + 500 + 7 + 10500 + 20, Out: out1 + out2}
			for i, r := range recs {
				steps[k*4+i] = append(steps[k*4+i], r)
			}
		}
	}
	for _, recs := range steps {
		postOTLP(t, frontPorts[1], "logs", claudeExport(t, recs))
	}

	var traces []jTrace
	waitFor(t, 90*time.Second, fmt.Sprintf("%d turns in Jaeger", len(want)), func() (bool, string) {
		for i, g := range gateways {
			require.False(t, g.Exited(), "%s stopped: %s", instances[i], g.LogText())
		}
		require.False(t, front.Exited(), "the front stopped: %s", front.LogText())
		traces = j.traces(t, "claude-code")
		roots := 0
		for _, tr := range traces {
			for _, sp := range tr.Spans {
				if sp.parent() == "" {
					roots++
				}
			}
		}
		dbg := ""
		for _, tr := range traces {
			r := 0
			for _, sp := range tr.Spans {
				if sp.parent() == "" {
					r++
				}
			}
			if r == 0 && dbg == "" {
				for _, sp := range tr.Spans {
					dbg += fmt.Sprintf(" [%s %s parent=%s]", sp.OperationName, sp.SpanID, sp.parent())
				}
			}
		}
		return roots >= len(want), fmt.Sprintf("%d traces, %d roots%s", len(traces), roots, dbg)
	})
	time.Sleep(3 * time.Second) // a turn built twice would arrive about now
	traces = j.traces(t, "claude-code")

	got := map[turnKey]int{}
	instanceOf := map[string]map[string]bool{} // session → gateways that built its turns
	perInstance := map[string]int{}
	for _, tr := range traces {
		var roots []jSpan
		names := map[string]int{}
		var callID string
		var sum tokenSum
		built := map[string]bool{}
		for _, sp := range tr.Spans {
			names[sp.OperationName]++
			built[processTags(tr.Processes[sp.ProcessID])["service.instance.id"]] = true
			switch {
			case sp.parent() == "":
				roots = append(roots, sp)
			case sp.OperationName == "execute_tool Bash":
				callID = sp.tagString("gen_ai.tool.call.id")
			case sp.OperationName == "chat "+model:
				sum.In += tagInt(sp, "gen_ai.usage.input_tokens")
				sum.Out += tagInt(sp, "gen_ai.usage.output_tokens")
			}
		}
		require.Len(t, roots, 1, "trace %s: one root (a turn split over two gateways has two)", tr.TraceID)
		session := roots[0].tagString("gen_ai.conversation.id")
		key := turnKey{session, callID}
		got[key]++
		assert.Equal(t, map[string]int{"invoke_agent claude-code": 1, "chat " + model: 2, "execute_tool Bash": 1}, names,
			"trace %s (session %s, call %s): the whole turn", tr.TraceID, session, callID)
		assert.Equal(t, want[key], sum, "trace %s: the tokens of its records", tr.TraceID)
		require.Len(t, built, 1, "trace %s: built on one gateway, got %v", tr.TraceID, built)
		for id := range built {
			if instanceOf[session] == nil {
				instanceOf[session] = map[string]bool{}
			}
			instanceOf[session][id] = true
			perInstance[id]++
		}
	}
	for key := range want {
		assert.Equal(t, 1, got[key], "turn %s / %s: exactly once", key.session, key.callID)
	}
	assert.Len(t, got, len(want), "no turn that was not sent")
	for session, ids := range instanceOf {
		assert.Len(t, ids, 1, "session %s: all its turns on one gateway", session)
	}
	var used []string
	for id, n := range perInstance {
		used = append(used, fmt.Sprintf("%s:%d", id, n))
	}
	sort.Strings(used)
	t.Logf("turns per gateway: %s", strings.Join(used, " "))
	for _, id := range instances {
		assert.Positive(t, perInstance[id], "turns built on %s", id)
	}
}
