/**
 * The Redis layout of stored responses, each item stored once (see ../chain.ts for the why).
 * All of a chain lives under one hash tag `{T}` (chainTag), so every script below touches
 * keys of one slot and runs unchanged on a Cluster:
 *
 * - `<prefix>chain:{T}`: one hash for the chain's records; per response id X the fields
 *   `X:m` (links and owner, JSON: p parent, c conversation, a its position, n how many
 *   items before a are the record's own input, x expiry ms,
 *   w owner, e endpoint), `X:s` (status, or "deleted" for a tombstone its descendants still
 *   need), `X:r` (the response, output left empty), `X:o` (output), `X:i` (own input), `X:d` (their item ids), `X:k`
 *   (how many records link to X), and `C:refs` per conversation C (records built on it).
 * - `:rewrites` in the same hash: how often a record already there was written again (a
 *   replace, a background response's progress); a caller holding history checks it (HISTORY).
 * - `<prefix>chain:{T}:leaves`: a sorted set of the records nothing links to, by expiry.
 * - `<prefix>conv2:{T}:<conversation id>`, `...:items` and `...:items:ids`: the conversation (conversations.ts).
 *
 * The hash and the set expire `ttl` after the chain's last write (one PEXPIRE each, whatever
 * the depth): a record that outlives its own expiry is kept only while a live record links
 * to it. A record dies (expires or is deleted) as a tombstone while something links to it;
 * when nothing does, it is dropped and the walk goes on to its parent ("drop"). Each save
 * drops a few expired leaves, so a fork nobody continues is gone soon after it expires.
 */
import { FINISHED_STATUSES } from "../../wire/protocol.js";

/** The chain's hash, its leaves, and the prefix of its conversations' keys. */
export function chainKeys(prefix: string, tag: string): { hash: string; leaves: string; conv: string } {
  const hash = `${prefix}chain:{${tag}}`;
  return { hash, leaves: `${hash}:leaves`, conv: `${prefix}conv2:{${tag}}:` };
}

/** KEYS: hash, leaves. ARGV: conversation key prefix, now (ms), then the script's own. */
const COMMON = `
local H, L = KEYS[1], KEYS[2]
local CONV, NOW = ARGV[1], tonumber(ARGV[2])
local DELETED = 'deleted'
local function meta(x)
  local m = redis.call('HGET', H, x .. ':m')
  if m then return cjson.decode(m) end
  return nil
end
-- Drops record x, then each ancestor that was kept only for it (dead, and nothing else links to it).
local function dropRecords(x)
  while x do
    local m = meta(x)
    redis.call('HDEL', H, x .. ':m', x .. ':s', x .. ':k', x .. ':r', x .. ':i', x .. ':o', x .. ':d')
    redis.call('ZREM', L, x)
    if not m then return end
    if m.c then
      if redis.call('HINCRBY', H, m.c .. ':refs', -1) <= 0 then
        redis.call('HDEL', H, m.c .. ':refs')
        if redis.call('EXISTS', CONV .. m.c) == 0 then redis.call('DEL', CONV .. m.c .. ':items', CONV .. m.c .. ':items:ids') end
      end
    end
    local p = m.p
    if not p or redis.call('HEXISTS', H, p .. ':s') == 0 then return end
    if redis.call('HINCRBY', H, p .. ':k', -1) > 0 then return end
    local pm = meta(p)
    if redis.call('HGET', H, p .. ':s') ~= DELETED and pm.x > NOW then
      redis.call('ZADD', L, pm.x, p)
      return
    end
    x = p
  end
end
-- As dropRecords; a hash left with its rewrite count only goes with the last record.
local function drop(x)
  dropRecords(x)
  if redis.call('HLEN', H) == 1 then redis.call('HDEL', H, ':rewrites') end
end
local function live(x)
  local s = redis.call('HGET', H, x .. ':s')
  if not s or s == DELETED then return nil end
  local m = meta(x)
  if not m or m.x <= NOW then return nil end
  return s, m
end
`;

/**
 * A live record and its whole history in one call. ARGV[3]: the id; ARGV[4]: the chain's
 * `:rewrites` when the caller's history of it was read, then pairs of a record id and its
 * meta (`X:m`) whose history the caller holds (../history-cache.ts); what it holds counts
 * only while no record of the chain was rewritten since (records are only added, or deleted,
 * which the walk sees). Returns false when the record is missing, deleted or expired (also
 * when a link is broken: never a truncated history), else [status, meta, response, output,
 * own input, from, rewrites, ...history chunks oldest first] (each chunk a JSON array):
 * `from` "" when the chunks are the whole history, "\t" when they start with a
 * conversation's items, else the id of the held record they follow (the walk stopped there:
 * its meta is unchanged). When the record itself is held, no output, input or chunks.
 */
export const HISTORY = `${COMMON}
local id = ARGV[3]
local s, m = live(id)
if not s then return false end
local held = {}
local rewrites = redis.call('HGET', H, ':rewrites') or '0'
if ARGV[4] == rewrites then
  for k = 5, #ARGV - 1, 2 do held[ARGV[k]] = ARGV[k + 1] end
end
local mj = redis.call('HGET', H, id .. ':m')
if held[id] == mj then return { s, mj, redis.call('HGET', H, id .. ':r'), '', '', id, rewrites } end
local own = redis.call('HMGET', H, id .. ':r', id .. ':o', id .. ':i')
local chunks, root, x, from = {}, m, m.p, ''
while x do
  -- One call per ancestor: its links and its two parts.
  local mio = redis.call('HMGET', H, x .. ':m', x .. ':i', x .. ':o')
  if not mio[1] or not mio[2] or not mio[3] then return false end
  if held[x] == mio[1] then
    from, root = x, nil
    break
  end
  local pm = cjson.decode(mio[1])
  chunks[#chunks + 1] = mio[3]
  chunks[#chunks + 1] = mio[2]
  root, x = pm, pm.p
end
if root and root.c then
  local raw = redis.call('LRANGE', CONV .. root.c .. ':items', 0, root.a - 1)
  if #raw < root.a then return false end
  local kept = {}
  for _, j in ipairs(raw) do if j ~= '' then kept[#kept + 1] = j end end
  chunks[#chunks + 1] = '[' .. table.concat(kept, ',') .. ']'
  from = '\t'
end
local out = { s, mj, own[1], own[2], own[3], from, rewrites }
for k = #chunks, 1, -1 do out[#out + 1] = chunks[k] end
return out`;

/**
 * Saves a record: its own parts and the link to its basis. KEYS[3]: the items list of the
 * conversation it builds on (else the hash again). ARGV[3..]: id, ttl ms, meta JSON, status,
 * response, output, own input, mode, the ids of own input and output (`X:d`); the mode is ("save", or "open": only while the stored one is open,
 * and its links stay as they are); then, for a turn in a conversation, `X:d` without the own
 * input ('' for none) and the own input's ids: a finished turn whose own input the
 * conversation holds right after its basis (the turn appended it there) links past those n
 * items (meta a, n) instead of keeping a second copy. Returns saved | missing | finished |
 * nobasis (the parent or conversation is gone: the caller saves the record whole instead).
 */
export const SAVE = String.raw`${COMMON}
local FINISHED = { ${[...FINISHED_STATUSES].map((s) => `["${s}"] = true`).join(", ")} }
local id, ttl = ARGV[3], tonumber(ARGV[4])
local m = cjson.decode(ARGV[5])
if ARGV[10] == 'open' then
  local s = live(id)
  if not s then return 'missing' end
  if FINISHED[s] then return 'finished' end
  local kept = meta(id)
  kept.w, kept.e = m.w, m.e
  redis.call('HINCRBY', H, ':rewrites', 1)
  redis.call('HSET', H, id .. ':m', cjson.encode(kept), id .. ':s', ARGV[6], id .. ':r', ARGV[7], id .. ':o', ARGV[8], id .. ':i', ARGV[9], id .. ':d', ARGV[11])
  return 'saved'
end
if m.p and redis.call('HEXISTS', H, m.p .. ':s') == 0 then return 'nobasis' end
if m.c and redis.call('EXISTS', KEYS[3]) == 0 then return 'nobasis' end
local old = meta(id)
if old then redis.call('HINCRBY', H, ':rewrites', 1) end
if old and old.p and redis.call('HEXISTS', H, old.p .. ':s') == 1 then redis.call('HINCRBY', H, old.p .. ':k', -1) end
if old and old.c then redis.call('HINCRBY', H, old.c .. ':refs', -1) end
if m.p then
  redis.call('HINCRBY', H, m.p .. ':k', 1)
  redis.call('ZREM', L, m.p)
end
local metaJson, own, ids = ARGV[5], ARGV[9], ARGV[11]
if m.c then
  redis.call('HINCRBY', H, m.c .. ':refs', 1)
  redis.call('PEXPIRE', KEYS[3], ttl, 'GT')
  redis.call('PEXPIRE', CONV .. m.c .. ':items:ids', ttl, 'GT')
  local n = #ARGV - 12
  if n > 0 and FINISHED[ARGV[6]] then
    local held = redis.call('LRANGE', CONV .. m.c .. ':items:ids', m.a, m.a + n - 1)
    local same = #held == n
    for k = 1, n do same = same and held[k] == ARGV[12 + k] end
    if same then
      m.a, m.n = m.a + n, n
      metaJson, own, ids = cjson.encode(m), '[]', ARGV[12]
    end
  end
end
redis.call('HSET', H, id .. ':m', metaJson, id .. ':s', ARGV[6], id .. ':r', ARGV[7], id .. ':o', ARGV[8], id .. ':i', own, id .. ':d', ids)
if tonumber(redis.call('HGET', H, id .. ':k') or '0') <= 0 then redis.call('ZADD', L, m.x, id) end
redis.call('PEXPIRE', H, ttl)
redis.call('PEXPIRE', L, ttl)
for _, x in ipairs(redis.call('ZRANGEBYSCORE', L, '-inf', NOW, 'LIMIT', 0, 4)) do drop(x) end
return 'saved'`;

/** Deletes a live record: a tombstone while records link to it, else dropped. ARGV[3]: the id. 1 when it was live. */
export const DELETE = `${COMMON}
local id = ARGV[3]
if not live(id) then return 0 end
if tonumber(redis.call('HGET', H, id .. ':k') or '0') > 0 then
  redis.call('HSET', H, id .. ':s', DELETED)
  redis.call('HDEL', H, id .. ':r')
else
  drop(id)
end
return 1`;

/**
 * A live record's owner and own items, for findItem. ARGV[3]: the id. [meta, own input, output]
 * or false. The own input of a record linked past it (meta n) is read where the conversation keeps it.
 */
export const ITEMS_OF = `${COMMON}
local id = ARGV[3]
local s, m = live(id)
if not s then return false end
local own = redis.call('HGET', H, id .. ':i')
if m.n then
  local kept = {}
  for _, j in ipairs(redis.call('LRANGE', CONV .. m.c .. ':items', m.a - m.n, m.a - 1)) do if j ~= '' then kept[#kept + 1] = j end end
  own = '[' .. table.concat(kept, ',') .. ']'
end
return { redis.call('HGET', H, id .. ':m'), own, redis.call('HGET', H, id .. ':o') }`;

/**
 * Deletes a conversation's record; its items go with it unless records built on it still
 * need them (they then go with the last of those). KEYS: the conversation hash, its items (and so its ids, KEYS[2] .. ':ids'),
 * the chain's hash. ARGV: the conversation id. 1 when something was deleted.
 */
export const DELETE_CONVERSATION = `
local n = redis.call('DEL', KEYS[1])
if tonumber(redis.call('HGET', KEYS[3], ARGV[1] .. ':refs') or '0') <= 0 then n = n + redis.call('DEL', KEYS[2], KEYS[2] .. ':ids') end
return n`;

/**
 * The item ids of a live record's input, by part, for a page of input_items. ARGV[3]: the id.
 * [meta, own ids, then per ancestor (nearest first) its id and its ids, then for a chain built
 * on a conversation "", the conversation, the position and the ids of its items up to it
 * (JSON)]; "whole" when the ids are not all kept (the caller reads the record instead); false as HISTORY.
 */
export const INPUT_IDS = `${COMMON}
local id = ARGV[3]
local s, m = live(id)
if not s then return false end
local own = redis.call('HGET', H, id .. ':d')
if not own then return 'whole' end
local out = { redis.call('HGET', H, id .. ':m'), own }
local root, x = m, m.p
while x do
  local pm = meta(x)
  local d = redis.call('HGET', H, x .. ':d')
  if not pm then return false end
  if not d then return 'whole' end
  out[#out + 1] = x
  out[#out + 1] = d
  root, x = pm, pm.p
end
if root.c then
  local ids = redis.call('LRANGE', CONV .. root.c .. ':items:ids', 0, root.a - 1)
  if #ids < root.a then return 'whole' end
  out[#out + 1] = ''
  out[#out + 1] = root.c
  out[#out + 1] = tostring(root.a)
  out[#out + 1] = #ids == 0 and '[]' or cjson.encode(ids)
end
return out`;

/**
 * Parts of a history as JSON arrays, in the order asked. ARGV[3..]: "<record id>\ti" (own
 * input), "<record id>\to" (output) or "\t<conversation id>\t<position>" (its items up to it).
 */
export const INPUT_LOAD = `${COMMON}
local out = {}
for k = 3, #ARGV do
  local ref = ARGV[k]
  if string.sub(ref, 1, 1) == '\t' then
    local c, a = string.match(ref, '^\t(.*)\t(%d+)$')
    local kept = {}
    for _, j in ipairs(redis.call('LRANGE', CONV .. c .. ':items', 0, tonumber(a) - 1)) do if j ~= '' then kept[#kept + 1] = j end end
    out[#out + 1] = '[' .. table.concat(kept, ',') .. ']'
  else
    out[#out + 1] = redis.call('HGET', H, string.sub(ref, 1, -3) .. ':' .. string.sub(ref, -1)) or '[]'
  end
end
return out`;
