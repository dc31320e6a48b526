// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package copilotcli

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestResumedSessionCountsEachSegmentOnce: a session run three times, the
// first two ending in a session.shutdown with that run's usage, the third
// cut before its shutdown. Its output is each shutdown's plus the tail's
// per-response outputTokens; the responses of a run that ends in a
// shutdown are in that shutdown's totals and never add to them, whatever
// model name a response was counted under. The rows keep the shape of the
// real Copilot CLI 1.0.59 rows of fixtures-new/copilot_cli (read in place);
// no fixture has a resumed session, so the case is built from them. The
// second run's responses name the model as the request did
// ("claude-opus-4.6") while its shutdown keys the metrics by another name
// ("claude-opus-4.6-1m"), the mismatch that left a real resumed session's
// responses counted on top of its shutdowns.
func TestResumedSessionCountsEachSegmentOnce(t *testing.T) {
	lines := []string{
		`{"type":"session.start","data":{"sessionId":"9a493a94-a307-489e-8bc7-d16f4afcd992","version":1,"producer":"copilot-agent","copilotVersion":"1.0.59","startTime":"2026-06-08T01:48:57.913Z","context":{"cwd":"/w","gitRoot":"/w","branch":"main"}},"id":"e1","timestamp":"2026-06-08T01:48:57.913Z","parentId":null}`,
		`{"type":"session.model_change","data":{"newModel":"claude-opus-4.6"},"id":"e2","timestamp":"2026-06-08T01:48:58.000Z","parentId":"e1"}`,
		`{"type":"user.message","data":{"content":"hi","interactionId":"i1"},"id":"e3","timestamp":"2026-06-08T01:49:00.000Z","parentId":"e2"}`,
		`{"type":"assistant.message","data":{"messageId":"m1","model":"claude-opus-4.6","content":"Hi!","toolRequests":[],"interactionId":"i1","turnId":"0","outputTokens":120,"requestId":"r1"},"id":"e4","timestamp":"2026-06-08T01:49:03.000Z","parentId":"e3"}`,
		`{"type":"assistant.message","data":{"messageId":"m2","model":"claude-opus-4.6","content":"Done.","toolRequests":[],"interactionId":"i1","turnId":"1","outputTokens":80,"requestId":"r2"},"id":"e5","timestamp":"2026-06-08T01:49:05.000Z","parentId":"e4"}`,
		`{"type":"session.shutdown","data":{"shutdownType":"routine","totalPremiumRequests":2,"modelMetrics":{"claude-opus-4.6":{"requests":{"count":2,"cost":2},"usage":{"inputTokens":19771,"outputTokens":200,"cacheReadTokens":0,"cacheWriteTokens":19768,"reasoningTokens":0}}}},"id":"e6","timestamp":"2026-06-08T01:50:00.000Z","parentId":"e5"}`,
		`{"type":"session.resume","data":{"eventCount":6},"id":"e7","timestamp":"2026-06-09T09:00:00.000Z","parentId":"e6"}`,
		`{"type":"user.message","data":{"content":"again","interactionId":"i2"},"id":"e8","timestamp":"2026-06-09T09:00:01.000Z","parentId":"e7"}`,
		`{"type":"assistant.message","data":{"messageId":"m3","model":"claude-opus-4.6","content":"Sure.","toolRequests":[],"interactionId":"i2","turnId":"2","outputTokens":50,"requestId":"r3"},"id":"e9","timestamp":"2026-06-09T09:00:04.000Z","parentId":"e8"}`,
		`{"type":"session.shutdown","data":{"shutdownType":"routine","totalPremiumRequests":1,"modelMetrics":{"claude-opus-4.6-1m":{"requests":{"count":1,"cost":1},"usage":{"inputTokens":21000,"outputTokens":55,"cacheReadTokens":19768,"cacheWriteTokens":0,"reasoningTokens":0}}}},"id":"e10","timestamp":"2026-06-09T09:01:00.000Z","parentId":"e9"}`,
		`{"type":"session.resume","data":{"eventCount":10},"id":"e11","timestamp":"2026-06-10T09:00:00.000Z","parentId":"e10"}`,
		`{"type":"user.message","data":{"content":"once more","interactionId":"i3"},"id":"e12","timestamp":"2026-06-10T09:00:01.000Z","parentId":"e11"}`,
		`{"type":"assistant.message","data":{"messageId":"m4","model":"claude-opus-4.6","content":"Here.","toolRequests":[],"interactionId":"i3","turnId":"3","outputTokens":33,"requestId":"r4"},"id":"e13","timestamp":"2026-06-10T09:00:04.000Z","parentId":"e12"}`,
	}
	evs := parseBytes("events.jsonl", []byte(strings.Join(lines, "\n")+"\n"), nil)
	tot := sumTokens(evs)
	assert.Equal(t, int64(200+55+33), tot.Output, "each shutdown's output plus the tail's per-response output")
	assert.Equal(t, int64(19768+19768), tot.CacheRead+tot.CacheCreation, "cache reads and writes from the shutdowns")
	for _, ev := range evs {
		assert.Empty(t, ev.Unparsed)
	}
}

// TestSystemNotification: the notice of background work done is a log
// event, not an unparsed record. Shape of the CLI's system.notification
// (data.content), as its session-events schema names it; no fixture has one.
func TestSystemNotification(t *testing.T) {
	evs := parseBytes("events.jsonl", []byte(`{"type":"system.notification","data":{"content":"Background agent finished"},"id":"n1","timestamp":"2026-06-08T01:50:00.000Z","parentId":null}`+"\n"), nil)
	if assert.Len(t, evs, 1) {
		assert.Empty(t, evs[0].Unparsed)
		assert.Equal(t, "Background agent finished", evs[0].Text)
		assert.Equal(t, "system.notification", evs[0].Attributes[attrEvent])
	}
}
