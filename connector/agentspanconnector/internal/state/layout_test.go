// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package state

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/spanmodel"
)

// The keys of saved events are those state already in storage was written
// under (the expected values are what the first version of EventKey
// computed): a change would lose every open unit's events at an upgrade.
func TestEventKeysAreStable(t *testing.T) {
	main := spanmodel.UnitKey{Thread: spanmodel.ThreadKey{Source: "claude_code", Session: "0b6f6c2e-session"}, Prompt: "p1"}
	sub := spanmodel.UnitKey{Thread: spanmodel.ThreadKey{Source: "codex", Session: "s", Agent: "agent-7"}}
	assert.Equal(t, "agent_span/e/142f1c8d5b772e05fd956fd7/0", EventKey(main, 0))
	assert.Equal(t, "agent_span/e/142f1c8d5b772e05fd956fd7/17", UnitEventKeys(main).Key(17))
	assert.Equal(t, "agent_span/e/298880414629812bed6a4517/0", UnitEventKeys(sub).Key(0))
	assert.Equal(t, "agent_span/e/298880414629812bed6a4517/17", EventKey(sub, 17))
}
