// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/opencode"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/source"
)

// TestOpenCodeTreeBatchesSessions: the sessions read in one poll go to the
// next consumer in few deliveries, each session's events in order, with
// agent.read.caught_up on the last record of every session.
func TestOpenCodeTreeBatchesSessions(t *testing.T) {
	data := t.TempDir()
	st := newOCStore(t, data)
	const n = 300
	for i := range n {
		ses := "ses_batch" + string(rune('a'+i/26/26%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i%26))
		st.session(ses, 1771000000000+int64(i))
		st.user(ses, "msg_"+ses[4:]+"1", 1771000000000+int64(i), "one")
		st.assistant(ses, "msg_"+ses[4:]+"2", "msg_"+ses[4:]+"1", 1771000000100+int64(i), 1771000000500+int64(i))
		st.bash(ses, "msg_"+ses[4:]+"2", "prt_"+ses[4:]+"b", "completed", 1771000000200+int64(i), nil)
	}
	sink := new(consumertest.LogsSink)
	srcs, stop := directSources(t, ocConfig(data), sink, componenttest.NewNopHost())
	defer stop()
	srcs[0].(*opencode.Source).Poll(t.Context())

	require.LessOrEqual(t, len(sink.AllLogs()), (n+source.MaxBatchSessions-1)/source.MaxBatchSessions, "sessions are delivered in batches")
	bySession := map[string][]string{}
	caughtUp := map[string]int{}
	var order []string
	for _, l := range sink.AllLogs() {
		for _, lr := range logRecords(l) {
			ses, _ := lr.Attributes().Get(agentevent.AttrSessionID)
			id, _ := lr.Attributes().Get(agentevent.AttrEventID)
			if len(bySession[ses.Str()]) == 0 {
				order = append(order, ses.Str())
			}
			bySession[ses.Str()] = append(bySession[ses.Str()], id.Str())
			if agentevent.CaughtUp(lr) {
				caughtUp[ses.Str()]++
				assert.Equal(t, "prt_"+ses.Str()[4:]+"b:result", id.Str(), "caught up on the session's last record")
			}
		}
	}
	require.Len(t, bySession, n)
	for ses, ids := range bySession {
		assert.Equal(t, []string{"msg_" + ses[4:] + "1", "prt_" + ses[4:] + "b", "prt_" + ses[4:] + "b:result"}, ids)
		assert.Equal(t, 1, caughtUp[ses], ses)
	}
	require.IsIncreasing(t, order, "sessions oldest first")
}
