{-# LANGUAGE OverloadedStrings #-}
-- | Happstack peer for the kiln benchmark suite: happstack-server, access log off.
-- Run it with +RTS -N1 for one core; it reads PORT and STATIC_DIR.
module Main (main) where

import Control.Monad (msum)
import Happstack.Server
import Network.Socket (SocketOption (NoDelay), setSocketOption)
import System.Environment (lookupEnv)

main :: IO ()
main = do
  port <- maybe 8080 read <$> lookupEnv "PORT"
  static <- maybe "static" id <$> lookupEnv "STATIC_DIR"
  -- happstack-server never sets TCP_NODELAY: with Nagle and delayed ACKs every keep-alive
  -- answer waited ~40 ms (~230 req/s). Accepted sockets inherit it from the listening one.
  sock <- bindIPv4 "127.0.0.1" port
  setSocketOption sock NoDelay 1
  simpleHTTPWithSocket sock nullConf {port = port, logAccess = Nothing} (site static)

site :: FilePath -> ServerPart Response
site static =
  msum
    [ dir "pong" $ nullDir >> plain "PONG",
      dir "hello" $ nullDir >> plain "Hello World!",
      dir "static" $ serveDirectory DisableBrowsing [] static
    ]

-- | A String answers as text/plain; charset=UTF-8, by default chunked, and an HTTP/1.0
-- client (ab -k) cannot keep a chunked connection: send its length instead.
plain :: String -> ServerPart Response
plain body = ok (toResponse body) {rsFlags = RsFlags ContentLength}
