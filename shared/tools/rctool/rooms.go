package rctool

import (
	"fmt"
	"strings"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// room is a resolved room argument.
type room struct {
	ID   string
	Name string // channel or group name; for a DM the counterpart's username
	Type sb.RoomType
}

// display renders a room for answers and messages: #name, @username or the id.
func (r room) display() string {
	switch {
	case r.Type == sb.RoomDirect && r.Name != "":
		return "@" + r.Name
	case r.Name != "":
		return "#" + r.Name
	}
	return r.ID
}

func typeName(t sb.RoomType) string {
	switch t {
	case sb.RoomChannel:
		return "channel"
	case sb.RoomGroup:
		return "group"
	case sb.RoomDirect:
		return "direct"
	case sb.RoomLivechat:
		return "livechat"
	}
	return string(t)
}

// resolve turns a room argument into a room: "@username" is the DM
// with that user, opened with im.create when create is set and none exists;
// "#name" a channel or group by name; anything else a room id, a channel or
// group name, or the counterpart of an existing DM, in that order. The
// agent's subscriptions answer first (cached, asked again on a miss);
// rooms.info finds public channels the agent has not joined.
// Errors: EINVALID for an empty argument; ENOTFOUND "unknown room …";
// EFORBIDDEN before opening a DM with a user outside allowedRooms; the
// client's errors otherwise.
func (c *invocation) resolve(arg string, create bool) (room, error) {
	arg = strings.TrimSpace(arg)
	if arg == "" {
		return room{}, sb.E(c.op, sb.EINVALID, "the room is empty; give a room name, a room id, or @username for a direct message (list_rooms shows the rooms)")
	}
	match := func(subs []sb.ChatSubscription) (room, bool) { return matchRoom(subs, arg) }
	r, ok, err := c.fromSubscriptions(match)
	if err != nil || ok {
		return r, err
	}

	if user, isDM := strings.CutPrefix(arg, "@"); isDM {
		user = strings.TrimSpace(user)
		if user == "" {
			return room{}, sb.E(c.op, sb.EINVALID, "the room \"@\" names nobody; write @username for a direct message")
		}
		dm := room{Name: user, Type: sb.RoomDirect}
		if !create {
			return room{}, sb.E(c.op, sb.ENOTFOUND, fmt.Sprintf(
				"there is no direct message with @%s yet; send_message with room \"@%s\" starts one", user, user))
		}
		// Opening a DM is already a visible act: check the list first.
		if !allowed(c.agent.AllowedRooms, dm) {
			return room{}, c.notAllowed(dm)
		}
		rid, err := c.agent.Client.CreateDM(c.ctx, user)
		if err != nil {
			return room{}, err
		}
		c.t.forget(c.call.AgentID)
		dm.ID = rid
		return dm, nil
	}

	info, err := c.agent.Client.RoomInfo(c.ctx, arg)
	if err != nil {
		if sb.ErrorCode(err) == sb.ENOTFOUND {
			return room{}, c.unknownRoom(arg, err)
		}
		return room{}, err
	}
	r = room{ID: info.ID, Name: info.Name, Type: info.Type}
	if info.Type == sb.RoomDirect {
		r.Name = counterpart(info.Usernames, c.agent.Username)
	}
	return r, nil
}

// matchRoom finds arg among subscriptions: "#name" by channel or group
// name; otherwise by id, then channel or group name, then DM counterpart;
// "@name" only by DM counterpart. Names compare case-insensitively (Rocket.Chat
// refuses names that differ only in case); ids exactly.
func matchRoom(subs []sb.ChatSubscription, arg string) (room, bool) {
	toRoom := func(s sb.ChatSubscription) room { return room{ID: s.RoomID, Name: s.Name, Type: s.Type} }
	find := func(ok func(sb.ChatSubscription) bool) (room, bool) {
		for _, s := range subs {
			if ok(s) {
				return toRoom(s), true
			}
		}
		return room{}, false
	}
	isDM := func(s sb.ChatSubscription) bool { return s.Type == sb.RoomDirect }
	if user, ok := strings.CutPrefix(arg, "@"); ok {
		user = strings.TrimSpace(user)
		return find(func(s sb.ChatSubscription) bool { return isDM(s) && user != "" && strings.EqualFold(s.Name, user) })
	}
	if name, ok := strings.CutPrefix(arg, "#"); ok {
		name = strings.TrimSpace(name)
		return find(func(s sb.ChatSubscription) bool { return !isDM(s) && name != "" && strings.EqualFold(s.Name, name) })
	}
	if r, ok := find(func(s sb.ChatSubscription) bool { return s.RoomID == arg }); ok {
		return r, true
	}
	if r, ok := find(func(s sb.ChatSubscription) bool { return !isDM(s) && strings.EqualFold(s.Name, arg) }); ok {
		return r, true
	}
	return find(func(s sb.ChatSubscription) bool { return isDM(s) && strings.EqualFold(s.Name, arg) })
}

// counterpart is the other member of a DM; a DM with oneself is oneself.
func counterpart(usernames []string, self string) string {
	for _, u := range usernames {
		if !strings.EqualFold(u, self) {
			return u
		}
	}
	if len(usernames) > 0 {
		return usernames[0]
	}
	return ""
}

// fromSubscriptions runs match over the agent's subscriptions: the cached
// ones first and, on a miss, a fresh copy (a room joined or a DM opened
// since the cache was filled).
func (c *invocation) fromSubscriptions(match func([]sb.ChatSubscription) (room, bool)) (room, bool, error) {
	subs, cached, err := c.subscriptions(false)
	if err != nil {
		return room{}, false, err
	}
	if r, ok := match(subs); ok || !cached {
		return r, ok, nil
	}
	if subs, _, err = c.subscriptions(true); err != nil {
		return room{}, false, err
	}
	r, ok := match(subs)
	return r, ok, nil
}

// subscriptions returns the agent's subscriptions, from the cache unless
// fresh is set or the cache is older than CacheTTL. cached tells where they
// came from.
func (c *invocation) subscriptions(fresh bool) (subs []sb.ChatSubscription, cached bool, err error) {
	t, id := c.t, c.call.AgentID
	t.mu.Lock()
	snap, ok := t.cache[id]
	now := t.now()
	t.mu.Unlock()
	if !fresh && ok && now.Sub(snap.at) < CacheTTL && now.Sub(snap.at) >= 0 {
		return snap.subs, true, nil
	}
	subs, err = c.agent.Client.Subscriptions(c.ctx, time.Time{})
	if err != nil {
		return nil, false, err
	}
	t.mu.Lock()
	t.cache[id] = subsSnapshot{at: now, subs: subs}
	t.mu.Unlock()
	return subs, false, nil
}

// forget drops an agent's cached subscriptions.
func (t *Tool) forget(agentID string) {
	t.mu.Lock()
	delete(t.cache, agentID)
	t.mu.Unlock()
}

// allowed reports whether r may be used under list: empty allows all;
// an entry matches the room id exactly or its name (a DM's counterpart
// username) case-insensitively; a leading # or @ in an entry is ignored.
func allowed(list []string, r room) bool {
	if len(list) == 0 {
		return true
	}
	for _, e := range list {
		e = bareRoomName(e)
		if e == "" {
			continue
		}
		if (r.ID != "" && e == r.ID) || (r.Name != "" && strings.EqualFold(e, r.Name)) {
			return true
		}
	}
	return false
}

// listed reports whether name is an entry of list as it stands.
func listed(list []string, name string) bool {
	if name == "" {
		return false
	}
	for _, e := range list {
		if e = bareRoomName(e); e == name || strings.EqualFold(e, name) {
			return true
		}
	}
	return false
}

// bareRoomName drops white space and one leading # or @.
func bareRoomName(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "#") || strings.HasPrefix(s, "@") {
		s = strings.TrimSpace(s[1:])
	}
	return s
}

// checkedRoom resolves arg and applies allowedRooms.
func (c *invocation) checkedRoom(arg string, create bool) (room, error) {
	r, err := c.resolve(arg, create)
	if err != nil {
		return room{}, err
	}
	if !allowed(c.agent.AllowedRooms, r) {
		return room{}, c.notAllowed(r)
	}
	return r, nil
}

func (c *invocation) notAllowed(r room) error {
	return sb.E(c.op, sb.EFORBIDDEN, fmt.Sprintf(
		"room %s is not in this agent's allowedRooms (%s); use one of those, or ask the operator to add it to RocketChat.allowedRooms",
		r.display(), strings.Join(c.agent.AllowedRooms, ", ")))
}

// unknownRoom is the clear error for a room the agent cannot see; cause is the client's (400
// invalid-channel or error-room-not-found), which keeps http_status and
// endpoint.
func (c *invocation) unknownRoom(arg string, cause error) error {
	hint := ""
	if !strings.HasPrefix(arg, "#") && !strings.HasPrefix(arg, "@") && validUsername(arg) {
		hint = fmt.Sprintf(" If %s is a person, write \"@%s\" to start a direct message.", arg, arg)
	}
	return sb.Wrap(c.op, sb.ENOTFOUND, fmt.Sprintf(
		"unknown room %s: no channel, group or direct message with this name or id is visible to this agent; list_rooms shows the rooms it can use.%s",
		quote(arg), hint), cause)
}

// validUsername is Rocket.Chat's default UTF8_User_Names_Validation.
func validUsername(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}
