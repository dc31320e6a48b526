// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package spanmodel

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// keyOrder lists a map's attributes in order, as key=value.
func keyOrder(m pcommon.Map) []string {
	var out []string
	for k, v := range m.All() {
		out = append(out, k+"="+v.AsString())
	}
	return out
}

// The builder gives the map pcommon.Map's Put methods give for the same
// calls: a key set again keeps its place and takes the new value.
func TestAttrBuilderIsPut(t *testing.T) {
	want := pcommon.NewMap()
	want.PutStr("agent.b", "1")
	want.PutInt("agent.c", 2)
	want.PutStr("gen_ai.operation.name", "x")
	want.PutStr("agent.b", "3")
	want.PutBool("agent.d", true)
	want.PutDouble("agent.c", 1.5)
	want.PutEmptySlice("agent.e").AppendEmpty().SetStr("stop")
	agentevent.PutValue(want, "agent.f", int64(7))

	var b attrBuilder
	b.add(strAttr("agent.b", "1"))
	b.add(intAttr("agent.c", 2))
	b.add(strAttr("gen_ai.operation.name", "x"))
	b.set(strAttr("agent.b", "3"))
	b.set(trueAttr("agent.d"))
	b.set(doubleAttr("agent.c", 1.5))
	b.add(attr{key: "agent.e", kind: attrStrs, strs: []string{"stop"}})
	b.set(rawAttr("agent.f", int64(7)))
	got := pcommon.NewMap()
	b.into(got)
	assert.Equal(t, want.AsRaw(), got.AsRaw())
	assert.Equal(t, keyOrder(want), keyOrder(got))
	assert.Empty(t, b.list, "empty again for the next span")
}

// An event attribute with the key of one the tool span sets itself keeps
// its sorted place among the event's attributes, with the span's value:
// what putting the event's attributes and then the span's own into a
// pcommon.Map gives.
func TestToolSpanKeyFromTheEventKeepsItsPlace(t *testing.T) {
	t0 := time.Date(2026, 1, 8, 14, 30, 0, 0, time.UTC)
	evs := []agentevent.Event{
		{Type: agentevent.TypeUserMessage, EventID: "p1", SessionID: "s1", Timestamp: t0},
		{
			Type: agentevent.TypeToolCall, EventID: "c1", SessionID: "s1", Timestamp: t0.Add(time.Second),
			ToolCallID: "t1", ToolName: "Bash", ResponseID: "r1",
			Attributes: map[string]any{"agent.z": "last", agentevent.AttrToolName: "from the event", "agent.a": int64(1)},
		},
		{Type: agentevent.TypeToolResult, EventID: "r1", SessionID: "s1", Timestamp: t0.Add(2 * time.Second), ToolCallID: "t1", ToolName: "Bash"},
	}
	var tool []string
	for _, sp := range mapTurn(evs) {
		if strings.HasPrefix(sp.Name(), opExecuteTool) {
			tool = keyOrder(sp.Attributes())
		}
	}
	require.NotEmpty(t, tool)
	assert.Equal(t, []string{
		"agent.a=1", "agent.z=last", agentevent.AttrToolName + "=Bash", agentevent.AttrOperationName + "=" + opExecuteTool,
		agentevent.AttrToolCallID + "=t1", agentevent.AttrToolType + "=" + toolTypeFunction, agentevent.AttrSessionID + "=s1",
		agentevent.AttrToolStatus + "=success",
	}, tool)
}
