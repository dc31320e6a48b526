// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package claudecode

import (
	"math"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// fuzzNativeNames are the event names the fuzz target picks from: every
// name the mapping knows or ignores, a prefixed one, an unknown one.
var fuzzNativeNames = func() []string {
	names := []string{
		"user_prompt", "api_request", "assistant_response", "api_error", "api_retries_exhausted",
		"api_refusal", "tool_result", "tool_decision", "compaction", "subagent_completed", "internal_error",
		"claude_code.api_request", "claude_code.tool_result", "brand_new_event", "",
	}
	for n := range nativeTurnOnly {
		names = append(names, n)
	}
	for n := range nativeIgnored {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}()

// fuzzNativeKeys are the attributes the fuzz target sets, each to a value of
// a wire type the input picks.
var fuzzNativeKeys = []string{
	"session.id", "prompt.id", "event.sequence", "event.timestamp", "input_tokens", "output_tokens",
	"cache_read_tokens", "cache_creation_tokens", "cost_usd", "cost_usd_micros", "duration_ms", "ttft_ms",
	"request_id", "client_request_id", "model", "query_source", "tool_name", "tool_use_id", "success",
	"error_type", "error", "decision", "source", "tool_input", "tool_parameters", "prompt", "prompt_length",
	"command_name", "response", "pre_tokens", "num_non_blocking_error", "status_code", "total_tokens",
	"to_mode", "agent_type", "user.email", "user.account_uuid", "organization.id",
}

// FuzzNativeMap maps records of arbitrary attribute values: no panic, an
// error only as ErrNativeUnmapped, and events that are sound (ids, roles,
// order, tokens, encodable values) and pass agentevent.Validate once the
// turn's prompt is in front of them.
func FuzzNativeMap(f *testing.F) {
	// Seeds: an api_request with int tokens; a tool_result of string
	// numbers; a tool_decision reject; odd values.
	f.Add(uint8(1), []byte{1, 1, 2, 1, 2, 2, 2, 2, 3, 2, 5, 2, 1, 1, 1, 1}, "s-1", "", int64(42), 0.5, true)
	f.Add(uint8(12), []byte{1, 1, 2, 1, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1}, "true", "Bash", int64(7), 7.0, false)
	f.Add(uint8(11), []byte{1, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 6, 6, 0, 0, 0, 1, 1, 6, 1}, "reject", "config", int64(3), -1.0, true)
	f.Add(uint8(0), []byte{2, 3, 3, 4, 3, 3, 3, 3, 3, 3, 3, 3}, "<REDACTED>", "{\"file_path\":\"a.go\"}", int64(-5), math.Inf(1), false)
	f.Add(uint8(5), []byte{1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, "9223372036854775807", "1e300", int64(math.MaxInt64), math.NaN(), true)
	// Regressions: a negative token count next to counted ones; token
	// counts whose inclusive sum would overflow.
	f.Add(uint8(0xe4), []byte("00000A"), "0", "0", int64(-182), math.Inf(1), false)
	f.Add(uint8(3), []byte("000000AA"), "0", "0", int64(math.MaxInt64), math.NaN(), false)
	f.Fuzz(func(t *testing.T, nameIdx uint8, kinds []byte, s1, s2 string, n int64, x float64, b bool) {
		name := fuzzNativeNames[int(nameIdx)%len(fuzzNativeNames)]
		attrs := map[string]any{"event.name": name}
		for i, k := range fuzzNativeKeys {
			if i >= len(kinds) {
				break
			}
			switch kinds[i] % 7 {
			case 1:
				attrs[k] = s1
			case 2:
				attrs[k] = n
			case 3:
				attrs[k] = x
			case 4:
				attrs[k] = b
			case 5:
				attrs[k] = strconv.FormatInt(n, 10)
			case 6:
				attrs[k] = s2
			}
		}
		rec := &agentevent.NativeRecord{Service: "claude-code", ServiceVersion: s2, Name: name, Attrs: attrs}
		if b {
			rec.Time = time.Unix(0, n).UTC()
			rec.TraceID = s1
		}
		evs, err := NewNativeMapper().Map(rec)
		if err != nil {
			require.ErrorIs(t, err, agentevent.ErrNativeUnmapped)
			require.Nil(t, evs)
			return
		}
		session, prompt := rec.Str("session.id"), rec.Str("prompt.id")
		hasPrompt := false
		for i := range evs {
			ev := &evs[i]
			require.Equal(t, agentevent.SchemaVersion, ev.SchemaVersion)
			require.Equal(t, Source, ev.Source)
			require.Equal(t, session, ev.SessionID)
			require.NotEmpty(t, ev.EventID)
			require.Contains(t, agentevent.AllowedRoles(ev.Type), ev.Role)
			if i > 0 {
				require.Greater(t, ev.Sequence, evs[i-1].Sequence)
			}
			require.Equal(t, agentevent.OriginNative, ev.Attributes[agentevent.AttrOrigin])
			for _, k := range identityKeys {
				require.NotContains(t, ev.Attributes, k)
			}
			for k, v := range ev.Attributes {
				switch v.(type) {
				case string, bool, int64, float64:
				default:
					t.Fatalf("attribute %s of type %T", k, v)
				}
			}
			for _, p := range []*int64{ev.TokensInput, ev.TokensOutput, ev.TokensCached, ev.TokensCacheCreation, ev.ToolLatencyMs} {
				if p != nil {
					require.GreaterOrEqual(t, *p, int64(0))
				}
			}
			if ev.TokensInput != nil {
				require.GreaterOrEqual(t, *ev.TokensInput, *ev.TokensCached+*ev.TokensCacheCreation)
				require.Equal(t, *ev.TokensInput+*ev.TokensOutput, *ev.TokensTotal)
			}
			if ev.CostUSD != nil {
				require.False(t, math.IsNaN(*ev.CostUSD) || math.IsInf(*ev.CostUSD, 0) || *ev.CostUSD < 0)
			}
			require.Nil(t, ev.ToolExitCode)
			hasPrompt = hasPrompt || ev.Type == agentevent.TypeUserMessage
		}
		stream := evs
		if prompt != "" && !hasPrompt && len(evs) > 0 {
			// The turn's user_prompt came in another record.
			p := agentevent.Event{
				SchemaVersion: agentevent.SchemaVersion, Source: Source, SessionID: session,
				EventID: promptEventID(session, prompt), Type: agentevent.TypeUserMessage, Role: agentevent.RoleUser,
			}
			stream = append([]agentevent.Event{p}, evs...)
		}
		require.Empty(t, agentevent.Validate(stream).Violations)
		decoded, skipped := agentevent.DecodeLogs(agentevent.EncodeLogs(evs, ""))
		require.Zero(t, skipped)
		require.Len(t, decoded, len(evs))
	})
}
