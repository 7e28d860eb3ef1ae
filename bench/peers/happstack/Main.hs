{-# LANGUAGE OverloadedStrings #-}
-- | Happstack peer for the kiln benchmark suite: happstack-server, access log off, the big
-- table in blaze-html.
-- Run it with +RTS -N1 for one core; it reads PORT and STATIC_DIR.
module Main (main) where

import Control.Applicative (optional)
import Control.Monad (forM_, msum)
import Happstack.Server
import Network.Socket (SocketOption (NoDelay), setSocketOption)
import System.Environment (lookupEnv)
import qualified Text.Blaze.Html5 as H
import Text.Read (readMaybe)

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
      dir "bigtable" $ nullDir >> bigtableHandler,
      dir "static" $ serveDirectory DisableBrowsing [] static
    ]

-- | A String answers as text/plain; charset=UTF-8, by default chunked, and an HTTP/1.0
-- client (ab -k) cannot keep a chunked connection: send its length instead.
plain :: String -> ServerPart Response
plain body = ok (withLength (toResponse body))

withLength :: Response -> Response
withLength response = response {rsFlags = RsFlags ContentLength}

bigtableHandler :: ServerPart Response
bigtableHandler = do
  rows <- optional (look "rows")
  cols <- optional (look "cols")
  case tableSize rows cols of
    Just (r, c) -> ok (withLength (toResponse (bigtable r c)))
    Nothing -> badRequest (withLength (toResponse ("bigtable is limited to 10000 rows and 1000 columns\n" :: String)))

-- | Yesod's bigtable: rows × cols, each cell its column number.
bigtable :: Int -> Int -> H.Html
bigtable rows cols = H.table $ forM_ [1 .. rows] $ \_ -> H.tr $ forM_ [1 .. cols] $ \col -> H.td (H.toHtml col)

-- | The table's size from the query: 1000 × 50 unless given, kiln's limits (10,000 rows,
-- 1,000 columns, 100,000 cells: rows beyond them dropped); Nothing for a bad value.
tableSize :: Maybe String -> Maybe String -> Maybe (Int, Int)
tableSize rows cols = do
  r <- size rows 1000 10000
  c <- size cols 50 1000
  return (min r (100000 `div` max 1 c), c)
  where
    size Nothing def _ = Just def
    size (Just raw) _ most = case readMaybe raw of
      Just n | n >= 0 && n <= most -> Just n
      _ -> Nothing
