// Starts dynalite (the pinned DynamoDB-API server) with its own command
// line, and keeps it running when a client goes away in the middle of a
// request: dynalite 4.0.0 rethrows the request's "aborted" error, which
// ends the whole process. A client that gives up (a route budget, a
// cancelled context, a proxy closing its side) is normal; it must not take
// every other client's tables with it.
//   usage: node scripts/dynalite.cjs [dynalite options…]
'use strict'
process.on('uncaughtException', (err) => {
  if (err && err.code === 'ECONNRESET' && err.message === 'aborted') {
    return // the request's client went away; its socket is closed already
  }
  console.error(err)
  process.exit(1)
})
require('dynalite/cli.js')
