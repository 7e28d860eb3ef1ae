{-# LANGUAGE OverloadedStrings, QuasiQuotes, TemplateHaskell, TypeFamilies, MultiParamTypeClasses, ViewPatterns #-}
-- | Yesod peer for the kiln benchmark suite: yesod-core on Warp, no sessions, no logging.
-- /bigtable is the Yesod bigtable report's table, rendered with Hamlet per request.
-- Run it with +RTS -N1 for one core; it reads PORT and STATIC_DIR.
module Main (main) where

import qualified Data.ByteString.Char8 as B
import Data.Text (Text)
import qualified Data.Text as T
import Network.HTTP.Types (hConnection, hContentLength, http10)
import Network.Wai (Middleware, Response, httpVersion, mapResponseHeaders, requestHeaders, responseHeaders)
import Network.Wai.Internal (Response (ResponseFile))
import Network.Wai.Handler.Warp (runSettings, setHost, setPort, defaultSettings)
import System.Directory (doesFileExist)
import System.Environment (lookupEnv)
import System.FilePath ((</>))
import Text.Read (readMaybe)
import Yesod.Core

newtype Peer = Peer {staticDir :: FilePath}

mkYesod "Peer" [parseRoutes|
/pong PongR GET
/hello HelloR GET
/bigtable BigtableR GET
/static/#Text StaticR GET
|]

instance Yesod Peer where
  makeSessionBackend _ = return Nothing
  shouldLogIO _ _ _ = return False

getPongR :: Handler Text
getPongR = return "PONG"

getHelloR :: Handler Text
getHelloR = return "Hello World!"

-- | rows × cols cells, each its column number; kiln's limits (10,000 rows, 1,000 columns:
-- 400 beyond them; 100,000 cells: rows beyond them dropped).
getBigtableR :: Handler Html
getBigtableR = do
  cols <- param "cols" 50 1000
  rows <- min (100000 `div` max 1 cols) <$> param "rows" 1000 10000
  withUrlRenderer [hamlet|
$newline never
<table>
  $forall _ <- range rows
    <tr>
      $forall col <- range cols
        <td>#{col}
|]
  where
    range n = [1 .. n] :: [Int]

param :: Text -> Int -> Int -> Handler Int
param name def most = do
  given <- lookupGetParam name
  case given of
    Nothing -> return def
    Just raw -> case readMaybe (T.unpack raw) of
      Just n | n >= 0 && n <= most -> return n
      _ -> invalidArgs [name]

getStaticR :: Text -> Handler ()
getStaticR name = do
  dir <- staticDir <$> getYesod
  let path = dir </> T.unpack name
  exists <- liftIO (doesFileExist path)
  if T.isPrefixOf "." name || not exists then notFound else sendFile "text/plain" path

main :: IO ()
main = do
  port <- maybe 8080 read <$> lookupEnv "PORT"
  static <- maybe "static" id <$> lookupEnv "STATIC_DIR"
  app <- toWaiAppPlain (Peer static)
  -- Yesod's own `warp` adds a request logger; this is the same stack without it.
  runSettings (setPort port $ setHost "127.0.0.1" defaultSettings) (keepAlive10 (defaultMiddlewaresNoLogging app))

-- | Warp keeps an HTTP/1.0 keep-alive connection open but does not say so, and ab -k then
-- waits for a close that never comes: answer the client's keep-alive with the header. Only
-- for a delimited body: one without a length cannot be kept, and Warp closes it.
keepAlive10 :: Middleware
keepAlive10 inner req respond
  | httpVersion req == http10, fmap (B.map lower) (lookup hConnection (requestHeaders req)) == Just "keep-alive" =
      inner req (respond . announce)
  | otherwise = inner req respond
  where
    lower c = if c >= 'A' && c <= 'Z' then toEnum (fromEnum c + 32) else c
    announce res
      | delimited res = mapResponseHeaders ((hConnection, "keep-alive") :) res
      | otherwise = res

-- | Whether the client can tell where the body ends: Warp sizes a file itself.
delimited :: Response -> Bool
delimited ResponseFile {} = True
delimited res = any ((== hContentLength) . fst) (responseHeaders res)
