{-# LANGUAGE OverloadedStrings #-}
-- | Snap peer for the kiln benchmark suite: snap-core on snap-server, the big table in blaze-html.
-- ACCESS_LOG is a file for the access log, or "off" (the Snap report ran both);
-- run it with +RTS -N1 for one core; it reads PORT and STATIC_DIR.
module Main (main) where

import Control.Applicative ((<|>))
import Control.Monad (forM_)
import qualified Data.ByteString.Char8 as B
import Snap.Core
import Snap.Http.Server
import Snap.Util.FileServe (serveDirectory)
import System.Environment (lookupEnv)
import Text.Blaze.Html.Renderer.Utf8 (renderHtmlBuilder)
import qualified Text.Blaze.Html5 as H
import Text.Read (readMaybe)

main :: IO ()
main = do
  port <- maybe 8080 read <$> lookupEnv "PORT"
  static <- maybe "static" id <$> lookupEnv "STATIC_DIR"
  accessLog <- maybe "off" id <$> lookupEnv "ACCESS_LOG"
  let logTo = if accessLog == "off" then ConfigNoLog else ConfigFileLog accessLog
      config =
        setPort port . setBind "127.0.0.1" . setAccessLog logTo . setErrorLog ConfigNoLog . setVerbose False $
          defaultConfig
  httpServe config (keepAlive10 >> site static)

site :: FilePath -> Snap ()
site static =
  route [("pong", ifTop (plain "PONG")), ("hello", ifTop (plain "Hello World!")), ("bigtable", ifTop bigtableHandler)]
    <|> dir "static" (serveDirectory static)

plain :: B.ByteString -> Snap ()
plain body = do
  modifyResponse (setContentType "text/plain" . setContentLength (fromIntegral (B.length body)))
  writeBS body

bigtableHandler :: Snap ()
bigtableHandler = do
  rows <- getQueryParam "rows"
  cols <- getQueryParam "cols"
  case tableSize (B.unpack <$> rows) (B.unpack <$> cols) of
    Just (r, c) -> do
      modifyResponse (setContentType "text/html; charset=utf-8")
      writeBuilder (renderHtmlBuilder (bigtable r c))
    Nothing -> do
      modifyResponse (setResponseCode 400 . setContentType "text/plain")
      writeBS "bigtable is limited to 10000 rows and 1000 columns\n"

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

-- | Snap keeps an HTTP/1.0 keep-alive connection open but does not say so, and ab -k then
-- waits for a close that never comes: answer the client's keep-alive with the header.
keepAlive10 :: Snap ()
keepAlive10 = do
  req <- getRequest
  let asked = B.map lower <$> getHeader "Connection" req
  if rqVersion req == (1, 0) && asked == Just "keep-alive"
    then modifyResponse (setHeader "Connection" "keep-alive")
    else return ()
  where
    lower c = if c >= 'A' && c <= 'Z' then toEnum (fromEnum c + 32) else c
