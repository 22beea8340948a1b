// kotlinx.coroutines channels as ChannelBenchmark and ChannelMemory drive them from Java.
//
// The loops of the benchmark's shapes: each is one coroutine started by runBlocking on the
// calling thread. While the coroutine is suspended in send or receive, runBlocking parks that
// thread, and the other side's send or receive unparks it, as a blocking send or receive of the
// JDK's queues, Jeton or jox does. The whole loop runs in one runBlocking, so what is measured is
// the channel, not a runBlocking per value (that bridge, trySendBlocking for instance, costs an
// event loop and a coroutine per call). Given a dispatcher (`on`), runBlocking starts the
// coroutine there instead and the calling thread only waits for it to end: the coroutine-native
// shape, which parks no thread while a value waits.
@file:JvmName("KotlinxChannels")

package dev.jeton.bench

import java.util.concurrent.Executors
import kotlin.coroutines.CoroutineContext
import kotlinx.coroutines.ExecutorCoroutineDispatcher
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.channels.ReceiveChannel
import kotlinx.coroutines.channels.SendChannel
import kotlinx.coroutines.runBlocking

/** Sends 0 until n into [to]. */
fun sendAll(to: Channel<Int>, n: Int, on: CoroutineContext) =
  runBlocking(on) {
    for (i in 0 until n) {
      to.send(i)
    }
  }

/** Receives n values from [from]. */
fun receiveAll(from: Channel<Int>, n: Int, on: CoroutineContext) =
  runBlocking(on) { repeat(n) { from.receive() } }

/** Receives n values from [from] and sends each into [to]. */
fun relay(from: Channel<Int>, to: Channel<Int>, n: Int, on: CoroutineContext) =
  runBlocking(on) { repeat(n) { to.send(from.receive()) } }

/** n round trips: sends i into [there], then waits for the answer from [back]. */
fun ping(there: Channel<Int>, back: Channel<Int>, n: Int, on: CoroutineContext) =
  runBlocking(on) {
    for (i in 0 until n) {
      there.send(i)
      back.receive()
    }
  }

/**
 * A dispatcher of two daemon threads: the coroutine-native shape on this 2-core machine, the
 * counterpart of virtual threads on their two carriers.
 */
fun twoThreads(): ExecutorCoroutineDispatcher =
  Executors.newFixedThreadPool(2) { r -> Thread(r, "kotlinx-2threads").apply { isDaemon = true } }
    .asCoroutineDispatcher()

/** trySend, whose ChannelResult (a value class) Java cannot call by name. */
fun <E> trySendOk(to: SendChannel<E>, value: E): Boolean = to.trySend(value).isSuccess

/** tryReceive: the value, or null if none was ready. */
fun <E : Any> tryReceiveOrNull(from: ReceiveChannel<E>): E? = from.tryReceive().getOrNull()

/** One send, waiting in runBlocking on this thread as the loops do; the value is not boxed here. */
fun <E> sendOne(to: SendChannel<E>, value: E) = runBlocking { to.send(value) }

/** One receive, waiting in runBlocking on this thread as the loops do. */
fun <E> receiveOne(from: ReceiveChannel<E>): E = runBlocking { from.receive() }
