package kv

// A decode step adds one token to each running request. Most tokens fit
// in the request's last block without completing it (AppendInBlock); one
// per block completes it, and the next needs a new block (AppendToken).
// The engine visits a decoding request only when a token does more than
// fill its block (DecodeRoom), and stores the tokens it took meanwhile
// when it visits it again (CatchUp).

// Touch reads the state s's next decode step will work on, the record of
// the copy it fills and its last block's, and returns a value derived from
// them. A caller about to visit several requests touches them all first:
// the loads do not depend on one another, so their cache misses overlap
// instead of stalling each visit in turn.
func (c *Cache) Touch(s *Seq) int32 {
	if s.own == 0 {
		return 0
	}
	cp := &c.copies[s.own-1]
	if cp.n == 0 {
		return cp.live
	}
	return cp.live + c.at(cp, cp.lo+cp.n-1).refs
}

// InBlockRoom returns how many decode tokens in a row AppendInBlock can
// still store for s: the tokens before the one that completes its last
// block (or needs a new one).
func (c *Cache) InBlockRoom(s *Seq) int64 {
	return max(0, int64(s.Blocks)*c.blockSize-1-int64(s.Tokens))
}

// DecodeRoom returns how many decode tokens in a row s can take without
// its caller visiting it: those before the token that completes its last
// block (InBlockRoom), and that one too when the block's registration may
// wait for the next visit (CatchUp): the block is past the prefix of an
// exclusive stream, and no observer hears the index change.
func (c *Cache) DecodeRoom(s *Seq) int64 {
	room := c.InBlockRoom(s)
	if s.lazyFrom > 0 && s.Blocks >= s.lazyFrom && int64(s.Tokens) < int64(s.Blocks)*c.blockSize && c.observe == nil {
		room++
	}
	return room
}

// lazyFrom returns Seq.lazyFrom for a request with the given content.
func (c *Cache) lazyFrom(content *Content) int32 {
	if !content.Exclusive || c.observe != nil {
		return 0
	}
	return int32(len(content.Prefix)) + 1 // the last block is past the prefix
}

// CatchUp stores the n decode tokens s took without a visit, registering
// its last block if one of them completed it.
func (c *Cache) CatchUp(s *Seq, n int32) {
	if n <= 0 {
		return
	}
	s.Tokens += n
	if int64(s.Tokens) == int64(s.Blocks)*c.blockSize {
		c.registerLast(s)
	}
}

// AppendInBlock stores one more token when it neither needs a new block
// nor completes the last one (15 of 16 decode steps), and reports whether
// it did; small enough to inline into the batch loop. Otherwise the caller
// takes AppendToken.
func (c *Cache) AppendInBlock(s *Seq) bool {
	if int64(s.Tokens)+1 < int64(s.Blocks)*c.blockSize {
		s.Tokens++
		return true
	}
	return false
}

// AppendToken stores one more token (decode). It may need one new block.
func (c *Cache) AppendToken(s *Seq, content *Content) bool {
	if int64(s.Tokens) < int64(s.Blocks)*c.blockSize {
		// Room in the last block: the common decode step.
		s.Tokens++
		if int64(s.Tokens)%c.blockSize == 0 {
			c.registerLast(s)
		}
		return true
	}
	if c.used == c.total {
		return false
	}
	c.store(s, content, 1)
	return true
}
