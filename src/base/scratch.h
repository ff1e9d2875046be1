/* SPDX-License-Identifier: MIT */
/*
** base/scratch.h: one reusable text buffer per thread, for text that is
** built, copied out and forgotten on every call (a result printed before
** it goes into its message): no allocation per use once it has grown.
*/
#ifndef TH_BASE_SCRATCH_H
#define TH_BASE_SCRATCH_H

#include "base/util.h"

/*
** The calling thread's scratch buffer, emptied (len 0). It stays the
** thread's: valid until the thread's next th_scratch or th_scratch_done,
** freed when the thread ends. NULL only when the buffer could not be
** registered for freeing (then the caller takes its slow path).
*/
th_buf *th_scratch(void);

/* Done with the buffer th_scratch returned: one that grew large (a huge
 * result) is freed rather than kept for the thread's life. */
void th_scratch_done(th_buf *b);

#endif
