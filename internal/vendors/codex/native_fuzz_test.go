// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package codex

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// FuzzNativeMap maps records of arbitrary names, kinds, decisions and
// attribute values (each sent as a string, an int, a bool or absent, the way
// Codex's Display fields and typed fields differ) through one mapper: Map
// never panics, an error always wraps agentevent.ErrNativeUnmapped, and
// every event is normalized, has an id, an allowed role, the record's
// session and the origin, and never a token count below zero.
func FuzzNativeMap(f *testing.F) {
	f.Add("codex.sse_event", "response.completed", "", "1065300", int64(1047808), "true", int64(1), uint8(0), int64(0))
	f.Add("codex.tool_result", "", "", "677", int64(2), "false", int64(2), uint8(1), int64(5))
	f.Add("codex.tool_decision", "", "Denied", "80", int64(0), "User", int64(3), uint8(2), int64(-1))
	f.Add("codex.user_prompt", "", "", "57", int64(57), "", int64(0), uint8(3), int64(10))
	f.Add("codex.api_request", "", "", "503", int64(503), "x", int64(0), uint8(4), int64(1<<62))
	f.Add("tool_result", "", "", "-5", int64(-5), "TRUE", int64(-1), uint8(5), int64(0))
	f.Add("event otel/src/metrics/client.rs:301", "", "", "", int64(0), "", int64(0), uint8(6), int64(0))
	f.Add("codex.turn_cost", "", "", "0.5", int64(0), "", int64(0), uint8(7), int64(0))
	f.Fuzz(func(t *testing.T, name, kind, decision, s string, n int64, s2 string, seq int64, shape uint8, ms int64) {
		m := NewNativeMapper()
		value := func(bits uint8) any {
			switch bits % 4 {
			case 0:
				return s
			case 1:
				return n
			case 2:
				return n%2 == 0
			}
			return nil
		}
		attrs := map[string]any{
			"event.name": name, "event.kind": kind, "decision": decision, "source": s2,
			"call_id": s2, "tool_name": s, "arguments": s2, "output": s, "prompt": s2,
			"error.message": value(shape >> 6), "endpoint": s2, "response": s,
		}
		for i, k := range []string{
			"input_token_count", "output_token_count", "cached_token_count", "reasoning_token_count",
			"cache_write_token_count", "tool_token_count", "duration_ms", "success", "tool_result_seq",
			"http.response.status_code", "prompt_length", "usage.estimated_usd", "ttft_ms",
		} {
			if v := value(shape + uint8(i)); v != nil {
				attrs[k] = v
			}
		}
		attrs["tool_result_seq"] = seq
		if shape&1 == 0 {
			attrs["conversation.id"] = "conv"
		}
		if shape&2 == 0 {
			attrs["event.timestamp"] = s2
		}
		rec := &agentevent.NativeRecord{Service: "codex_cli_rs", ServiceVersion: "0.1", Name: name, Attrs: attrs}
		if shape&4 == 0 {
			rec.Time = time.Unix(0, ms)
		}
		// Twice: the second pass maps against the state the first left.
		for range 2 {
			evs, err := m.Map(rec)
			if err != nil {
				require.ErrorIs(t, err, agentevent.ErrNativeUnmapped)
				require.Empty(t, evs)
				continue
			}
			for i := range evs {
				ev := &evs[i]
				require.Equal(t, agentevent.SchemaVersion, ev.SchemaVersion)
				require.NotEmpty(t, ev.EventID)
				require.Contains(t, agentevent.AllowedRoles(ev.Type), ev.Role)
				require.Equal(t, "conv", ev.SessionID)
				require.Equal(t, agentevent.OriginNative, ev.Attributes[agentevent.AttrOrigin])
				for _, p := range []*int64{ev.TokensInput, ev.TokensOutput, ev.TokensCached, ev.TokensThinking, ev.TokensCacheCreation, ev.ToolLatencyMs} {
					if p != nil {
						require.GreaterOrEqual(t, *p, int64(0))
					}
				}
			}
		}
	})
}
